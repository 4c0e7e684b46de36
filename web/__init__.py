"""What the Django apps and the project's wiring (config) share of the web: the page cache in
front of Django, the API's one error shape, the write throttle, the login lockout and the
collection of static files. It sits below every app and imports none of them, nor config."""
