module msgen.test/live/pause

go 1.26.0
