// The measured-run corpus shipped with Blueprinting: the text of
// tests/validation/corpus.json, embedded at build time (corpus_data.cc).
#ifndef BLUEPRINTING_CORE_VALIDATION_CORPUS_H_
#define BLUEPRINTING_CORE_VALIDATION_CORPUS_H_

namespace blueprint {

// ValidationCorpusText: the corpus document, for ParseCorpus (validation.h).
const char* ValidationCorpusText();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_VALIDATION_CORPUS_H_
