"""`python -m wikipairs`: the `wikipairs` command, where no console script is on PATH."""
from .cli import main

if __name__ == "__main__":
    main(prog_name="wikipairs")  # else click names the program `python -m wikipairs`
