// Package svgtest checks SVG output in tests: the chaos timelines and the
// benchmark plots.
package svgtest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"testing"
)

// WellFormed fails the test unless svg parses as XML to the end.
func WellFormed(tb testing.TB, svg []byte) {
	tb.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			tb.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
}
