package main

import (
	"encoding/json"
	"io"
)

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
