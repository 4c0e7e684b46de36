import sys

sys.exit(0)  # a clean exit before ModelNew exists must not read as success
