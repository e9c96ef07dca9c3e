package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// workDir returns dir, made if missing, or when dir is empty a new
// temporary directory named after pattern; cleanup removes only the
// temporary one, so a directory the caller named keeps its corpus.
func workDir(dir, pattern string) (d string, cleanup func(), err error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	d, err = os.MkdirTemp("", pattern)
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}

// corpusIn returns corpus when it names a file, else a corpus of cfg
// written into dir.
func corpusIn(ctx context.Context, dir, corpus string, cfg CorpusConfig) (string, error) {
	if corpus != "" {
		return corpus, nil
	}
	corpus = filepath.Join(dir, "corpus.jsonl")
	if err := WriteCorpus(ctx, corpus, cfg); err != nil {
		return "", fmt.Errorf("bench: corpus: %w", err)
	}
	return corpus, nil
}
