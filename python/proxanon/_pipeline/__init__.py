"""``anonymize``'s pipeline, in the order it runs: ``inputs`` (what it reads), ``classes``
(the steps on published classes), ``mondrian`` (the Mondrian-(ε, δ) cut), ``candidates`` (one
way of publishing the table and its cost), ``job`` (one candidate's steps), ``threads`` (the
cut's thread beside XColor's run), ``choose`` (the table to publish), ``publish`` (the
published table and its report) and ``verdict`` (the text of an infeasible verdict)."""
