"""The first line of the suite's fresh processes that import nltk.

Importing nltk imports scipy.stats and scikit-learn where they are installed,
for its classifier, association-measure and parser bindings (each import
guarded by ``except ImportError``): two thirds of nltk's import, about three
seconds of CPU a process. What those processes check (where NLTK data is
searched and downloaded, Punkt's tokens, that nltk's WordNet reader stays
unloaded) uses none of it. ``LEAN_NLTK`` makes those two imports fail as they
do where scipy and scikit-learn are not installed, which nltk supports; nltk
itself, and its search path built from the process's environment, are
imported as ever.
"""

LEAN_NLTK = "import sys; sys.modules.update(scipy=None, sklearn=None)\n"
