"""Griffe extension for the API reference (loaded by mkdocs.yml; not part of the package).

``proxanon.anonymize`` is both a function that ``__init__`` exports and the submodule that
defines it; Griffe keeps the submodule under that name, so ``::: proxanon.anonymize`` would
document the module. This extension points each public name of ``proxanon`` that a
submodule shadows at the object of that name inside it, as ``import proxanon`` sees it.
The pages then name objects by their public path, wherever the code defining them moves.
"""

from __future__ import annotations

from typing import Any

import griffe


class PublicNames(griffe.Extension):
    """Public names of ``proxanon`` that a submodule of the same name shadows."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.path != "proxanon":
            return
        for name in list(pkg.exports or ()):
            member = pkg.members.get(name)
            if member is None or not member.is_module or name not in member.members:
                continue
            target = member.members[name]
            if not target.is_module:
                pkg.set_member(name, griffe.Alias(name, target, parent=pkg))
