package main

import (
	"context"
)

func runStoreExport(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store export", "store export --store URL [--space ID]\n\nPrints everything held, as it travels (stubs as stubs), as JSON lines in sync\norder (createdAt, then id digest), space by space.")
	url := storeFlag(fs)
	space := fs.String("space", "", "export only this space `ID`")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 0 {
		return usageError("store export takes no arguments")
	}
	st, err := openStore(*url, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	for raw, err := range st.ExportJSON(ctx, *space) {
		if err != nil {
			return failed(err)
		}
		if _, err := s.out.Write(append(raw, '\n')); err != nil {
			return err
		}
	}
	return nil
}
