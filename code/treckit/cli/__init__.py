"""The ``treckit`` command: one typer app, one module per command group, no logic beyond arguments."""
