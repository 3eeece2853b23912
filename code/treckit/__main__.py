"""python -m treckit: the treckit command."""
from .cli.main import run

run()
