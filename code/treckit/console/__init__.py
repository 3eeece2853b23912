"""What treckit says and how its processes start and end: errors that name the file, line, text and fix
(:mod:`.errors`), warnings and notes on stderr (:mod:`.messages`), options spelled as the running command spells
them (:mod:`.spelling`), progress on a terminal (:mod:`.progress`), and a process's set-up, exit codes and
Ctrl-C (:mod:`.process`).  Nothing is imported here."""
