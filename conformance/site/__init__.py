"""``conformance site``: the behaviour reference as a static site, a page per operation, case,
claim, family and framework, from one or more results files (docs/site.md).

A report like ``reports/behaviour.md``: it reads results files only (and the release results
of the changelog), through the same analysis (:mod:`conformance.report.analysis`). Plain
files that work from disk and from any static host: no network resource, no script needed
to read a page (search is the one page that runs one). Deterministic: the same results give
byte-identical files.

- :mod:`conformance.site.urls`: where each page lives (the URL scheme);
- :mod:`conformance.site.pages`: what each page shows, as data;
- :mod:`conformance.site.chart`: the home page's chart, as inline SVG;
- :mod:`conformance.site.search`: the prebuilt search index;
- :mod:`conformance.site.render`: the pages as HTML (Jinja2 templates, imported only here);
- :mod:`conformance.site.output`: writing the folder, whole;
- :mod:`conformance.site.screenshots`: PNGs of pages in Chromium, for people to look at.
"""
