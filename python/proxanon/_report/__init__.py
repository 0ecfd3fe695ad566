"""The HTML disclosure-risk report's pieces, below its entry points in
:mod:`proxanon.html_report` (docs/guide/report.md): ``formatting`` (figures as text, bound
to the numbers block, and the style sheet), ``plots`` (the matplotlib figures), ``numbers``
(the page's content and its numbers block) and ``sections`` (the page, section by section).
Each imports only those named before it, and none imports :mod:`proxanon.html_report`."""
