"""Table files in and out, one part per module (:mod:`proxanon.tableio` is the public face):
``base`` (formats, errors, standard output), ``csv_table``, ``parquet_table`` and ``files``
(writes that are whole or nothing).
"""
