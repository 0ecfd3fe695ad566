"""The parts of a taxonomy (:class:`proxanon.hierarchy.Hierarchy`), one per module.

``labels`` matches data values to leaf labels and decodes files; ``paths`` turns what a user
gives (ARX rows and files, nested mappings, a column's values) into root-first label paths;
``intervals`` and ``levels`` make the paths of the built taxonomies (numeric bands; masked
codes, ordered groups, calendar periods); ``tree`` numbers the nodes into the flat arrays
the engine reads (docs/guide/hierarchies.md, docs/design/publishing.md).
"""
