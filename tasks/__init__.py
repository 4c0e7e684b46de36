"""The task catalogue: catalog/<suite>/<task>/ folders, their Task rows and sync."""
