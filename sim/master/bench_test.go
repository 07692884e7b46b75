package master_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/sim/master"
)

func script(b *testing.B, name string) string {
	src, err := os.ReadFile("../../redlock/scripts/" + name + ".lua")
	if err != nil {
		b.Fatal(err)
	}
	return string(src)
}

func BenchmarkAcquireRelease(b *testing.B) {
	acq, rel := script(b, "acquire"), script(b, "release")
	m := master.New("m", time.Unix(1000, 0), master.Persistence{}, master.NewClock(time.Unix(1000, 0), 0, 1), -1)
	now := time.Unix(1000, 0)
	i := 0
	for b.Loop() {
		i++
		tok := strconv.Itoa(i)
		m.Eval(now, acq, []string{"{k}:tomb:" + tok, "k"}, []string{tok, "1000"}, nil)
		m.Eval(now, rel, []string{"{k}:tomb:" + tok, "k"}, []string{tok, "", "60000"}, nil)
	}
}
