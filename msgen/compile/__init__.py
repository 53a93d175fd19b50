"""The orchestration: a session over many inputs (`driver`) and the stage order (`pipeline`)."""
