package pool

import "testing"

// The layers named are off, the others on; a name that is no layer's
// stops the program.
func TestParseLayers(t *testing.T) {
	all := layerSet{combine: true, yield: true, recycle: true, evalFirst: true}
	cases := []struct {
		off  string
		want layerSet
	}{
		{"", all},
		{"combine, yield", layerSet{recycle: true, evalFirst: true}},
		{"recycle,evalfirst,", layerSet{combine: true, yield: true}},
	}
	for _, c := range cases {
		if got := parseLayers(c.off); got != c.want {
			t.Errorf("parseLayers(%q) = %+v, want %+v", c.off, got, c.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("parseLayers(\"solo\") did not panic")
		}
	}()
	parseLayers("solo")
}
