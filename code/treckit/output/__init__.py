"""Result writers: trec_eval's text (byte-identical), rich tables, JSON/CSV records."""
