"""A stand-in for an LLM that turns changelog entries into release notes.

Canned outputs keep the examples deterministic and offline; in a real suite
this would call your model or your application.
"""

NOTES = {
    "Retry failed HTTP requests with exponential backoff and honour the Retry-After header.": (
        "Failed HTTP requests are now retried with exponential backoff and the Retry-After "
        "header is respected."
    ),
    "Add an export of the report as a CSV file.": "You can now export reports as CSV files.",
    "Support a dark colour theme in the settings page.": (
        "A dark colour theme is now available on the settings page."
    ),
    "Fix the login page hanging when the server does not answer.": (
        "The login page no longer hangs when the server does not respond."
    ),
    "Drop support for Python 3.8; Python 3.9 or newer is required.": (
        "Python 3.8 is no longer supported; you now need Python 3.9 or newer."
    ),
    "Cache search results so repeated searches are twice as fast.": (
        "Search results are now cached, so repeated searches are twice as fast."
    ),
    "Accept non-ASCII characters such as é and ß in user names.": (
        "User names can now contain non-ASCII characters like é and ß."
    ),
    "Record every change of a user's permissions in the audit log.": (
        "Changes to a user's permissions are now recorded in the audit log."
    ),
}


def release_note(change: str) -> str:
    """The release note the 'model' writes for one changelog entry."""
    return NOTES[change]
