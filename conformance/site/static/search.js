// Search over the prebuilt index (search-index.js: window.SEARCH_INDEX, entries
// [kind, name, title, path, words, api, reasons]). Every word typed must occur in the entry
// (a dotted word the entry lacks whole, "paddle.reshape", matches if each of its parts does);
// an exact name or API spelling ranks first, then where the words occur: the name, the API
// spellings, the title, the words, the reasons. Runs from disk: no fetch, nothing loaded but
// the two scripts; results are written as text, never as markup.
(function () {
  "use strict";
  var index = window.SEARCH_INDEX || [];
  var opWords = (window.SEARCH_OPERATION_WORDS || "").toLowerCase();  // every operation runs in every mode
  var input = document.getElementById("q");
  var list = document.getElementById("results");
  var count = document.getElementById("count");
  var LIMIT = 100;
  var TIERS = [["name", 8], ["api", 6], ["title", 3], ["words", 2], ["reasons", 1]];
  var hay = index.map(function (e) {
    var api = (e[5] || "").toLowerCase();
    var tokens = {};
    api.split(/[\s;(),]+/).forEach(function (t) { if (t) tokens[t] = true; });
    return {name: e[1].toLowerCase(), api: api, tokens: tokens, title: e[2].toLowerCase(),
            words: ((e[4] || "") + " " + e[0] + (e[0] === "operation" ? " " + opWords : "")).toLowerCase(), reasons: (e[6] || "").toLowerCase()};
  });
  function tier(h, w) {  // the weight of the best field that contains w, 0 if none
    for (var t = 0; t < TIERS.length; t++) {
      if (h[TIERS[t][0]].indexOf(w) >= 0) return TIERS[t][1];
    }
    return 0;
  }
  function score(h, words, q) {
    var s = 0;
    for (var i = 0; i < words.length; i++) {
      var w = words[i], best = tier(h, w);
      if (best) {
        s += best;
        if (h.name === w || h.name === w.replace(/\./g, "_")) s += 30;
        if (h.tokens[w]) s += 40;
        continue;
      }
      var parts = w.split(".").filter(Boolean);
      if (parts.length < 2) return -1;
      for (var p = 0; p < parts.length; p++) {
        var t = tier(h, parts[p]);
        if (!t) return -1;
        s += t / 2;
        if (h.name === parts[p]) s += 30;
      }
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
