"""The one language layer that learn, select and advise share.

- `habitus.lang.words`: tokens (any script; Chinese and Japanese as character bigrams), stemming by the
  Snowball stemmers (`snowballstemmer`, one per language, English irregular verbs folded first) and
  stop words per language;
- `habitus.lang.language`: the one guess of a text's language (`language_of`, `is_english`), from its
  script and from the function words of what a person typed (code, paths and pasted lines do not vote);
- `habitus.lang.grammar`: the When/Do grammar of a habit's wording: the lead of a condition ("When",
  "Whenever", "Before", "When about to"), whether it names an activity the agent or the user is doing
  ("When writing a commit message", "When about to push to main") or an event that happens ("When a
  test fails"), and the "Do ..." / "Do not ..." polarity of a behaviour.

What one room writes (analyze's wording) another reads (select's parser): tests/test_lang.py ties the
two together. Each room keeps only its own grammar (learn's friction markers, select's moods and verb
classes, advise's evidence rules) in its own package.

Pure standard library at import; a stemmer module loads on first use.
"""
