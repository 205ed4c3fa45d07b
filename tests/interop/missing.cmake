# Fails a test whose tool is missing, with the message saying what to install.
message(FATAL_ERROR "${MESSAGE}")
