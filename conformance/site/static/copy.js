// The copy buttons of a case page's repro snippets: one after each snippet's <pre>, made here
// (a page carries no button markup: without JavaScript there is nothing to press, and the
// snippets can be selected by hand). A button copies its snippet's text (never markup) to the
// clipboard. Runs from disk.
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
  var blocks = document.querySelectorAll("details.repro > pre");
  Array.prototype.forEach.call(blocks, function (pre) {
    var code = pre.querySelector("code");
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    pre.parentNode.insertBefore(button, pre.nextSibling);
    button.addEventListener("click", function () {
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
