"""The result types and the measures they report: the utility measures of published groups
(``measures``), and ``Partition``, ``AuditReport``, ``Report`` and ``Anonymization``. They
read no renderer and run no engine: the layers above build and render them."""
