// Search over the prebuilt index (search-index.js: window.SEARCH_INDEX, entries
// [kind, name, title, path, words]). Every word typed must occur in the entry; entries whose
// name matches come first. Runs from disk: no fetch, nothing loaded but the two scripts.
(function () {
  "use strict";
  var index = window.SEARCH_INDEX || [];
  var input = document.getElementById("q");
  var list = document.getElementById("results");
  var count = document.getElementById("count");
  var LIMIT = 100;
  var hay = index.map(function (e) {
    return {name: e[1].toLowerCase(), all: (e[1] + " " + e[2] + " " + e[4] + " " + e[0]).toLowerCase()};
  });
  function score(h, words, q) {
    var s = 0;
    for (var i = 0; i < words.length; i++) {
      if (h.all.indexOf(words[i]) < 0) return -1;
      if (h.name.indexOf(words[i]) >= 0) s += 2;
    }
    if (h.name === q) s += 100;
    else if (h.name.indexOf(q) === 0) s += 20;
    return s;
  }
  function show() {
    var q = input.value.trim().toLowerCase();
    list.textContent = "";
    if (!q) { count.textContent = "Type to search."; return; }
    var words = q.split(/\s+/), found = [];
    for (var i = 0; i < index.length; i++) {
      var s = score(hay[i], words, q);
      if (s >= 0) found.push([s, i]);
    }
    found.sort(function (a, b) { return b[0] - a[0] || a[1] - b[1]; });
    count.textContent = found.length + (found.length === 1 ? " match" : " matches") +
      (found.length > LIMIT ? " (the first " + LIMIT + " shown)" : "");
    found.slice(0, LIMIT).forEach(function (f) {
      var e = index[f[1]], li = document.createElement("li"), a = document.createElement("a");
      var badge = document.createElement("span"), title = document.createElement("div");
      badge.className = "badge"; badge.textContent = e[0];
      a.href = e[3]; a.textContent = e[1];
      title.className = "small"; title.textContent = e[2];
      li.appendChild(badge); li.appendChild(a); li.appendChild(title);
      list.appendChild(li);
    });
  }
  var params = new URLSearchParams(window.location.search);
  if (params.get("q")) input.value = params.get("q");
  input.addEventListener("input", show);
  document.getElementById("search").addEventListener("submit", function (ev) { ev.preventDefault(); show(); });
  show();
})();
