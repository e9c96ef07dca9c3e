package folder

import (
	"path/filepath"
	"strings"
)

// SyncServices names the sync services whose folders contain path, as far
// as their conventional locations and marker files tell: Dropbox, iCloud
// Drive, OneDrive, Google Drive, Syncthing, File Provider. Two or more
// means two services fight over one folder (F10: Obsidian tells its users
// never to do that); callers warn.
func SyncServices(fsys FS, path string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	p := filepath.Clean(path)
	for {
		base := filepath.Base(p)
		lower := strings.ToLower(base)
		switch {
		case lower == "dropbox" || strings.HasPrefix(lower, "dropbox ("):
			add("Dropbox")
		case base == "Mobile Documents" || base == "iCloud Drive" || strings.HasPrefix(lower, "icloud"):
			add("iCloud Drive")
		case lower == "onedrive" || strings.HasPrefix(lower, "onedrive -") || strings.HasPrefix(lower, "onedrive-"):
			add("OneDrive")
		case lower == "google drive" || lower == "my drive" || strings.HasPrefix(lower, "googledrive"):
			add("Google Drive")
		}
		for marker, service := range map[string]string{".stfolder": "Syncthing", ".dropbox": "Dropbox", ".dropbox.cache": "Dropbox"} {
			if _, err := fsys.Stat(filepath.Join(p, marker)); err == nil {
				add(service)
			}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return out
		}
		p = parent
	}
}
