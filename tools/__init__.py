"""Scripts for working on the package (not shipped): tools/codegen.py writes the typed stub."""
