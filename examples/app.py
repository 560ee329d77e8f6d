"""A stand-in for the application under test: canned answers, as an LLM might give them."""

ANSWERS = {
    "What is the largest city in France?": "Paris is the largest city in France.",
    "Where was Marie Curie born?": "Marie Curie was born in Warsaw, Poland.",
    "At what temperature does water boil at sea level?": (
        "Water boils at 100 degrees Celsius at sea level."
    ),
    "How fast does light travel in a vacuum?": (
        "In a vacuum, light travels at about 300,000 kilometres per second."
    ),
    "What is the highest mountain on Earth?": "The highest mountain on Earth is Mount Everest.",
}


def answer(question: str) -> str:
    """Return the application's answer to ``question``."""
    return ANSWERS[question]
