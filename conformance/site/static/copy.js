// The copy buttons of a case page's repro snippets: copies the snippet's text (never markup)
// to the clipboard. Runs from disk; without JavaScript the buttons stay hidden and the
// snippets can be selected by hand.
(function () {
  "use strict";
  function fallback(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }
  var buttons = document.querySelectorAll("button[data-copy]");
  Array.prototype.forEach.call(buttons, function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var code = document.getElementById(button.getAttribute("data-copy"));
      var text = code ? code.textContent : "";
      function done(ok) { button.textContent = ok ? "Copied" : "Select and copy by hand"; }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(fallback(text)); });
      } else {
        done(fallback(text));
      }
    });
  });
})();
