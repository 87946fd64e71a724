"""Renderers of the JSON report (``reprobundle-report/1``) into the other formats.

Every renderer here is pure: it lays out the report *view* (``bundler.reports.view``),
which ``report_view`` builds once from the report data that
``bundler.reports.document.to_json`` (or ``rejection_json``) returns, and gives text.
Building from the data rather than from the live objects means a stored JSON report
renders exactly like a fresh one, and each format cannot show anything the JSON report
does not carry; building every derived fact once, in the view, means no format words a
fact differently from another (``tests/project/test_report_view.py``).

One module per output format: ``markdown`` (a report's appendix), ``junit`` (CI),
``html`` (one self-contained page), ``terminal`` (rich tables), ``difftext`` (the text
of ``reprobundle diff``). Import the one you need: each costs milliseconds at start.
"""
