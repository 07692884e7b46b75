package redlocktest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/redlocktest"
)

func ping(addr string) error {
	c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(300*time.Millisecond))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do("PING")
	return err
}

// A master answers; paused it answers nothing; resumed it answers again.
func TestMasterPauseResume(t *testing.T) {
	m := redlocktest.NewMaster(t)
	if err := ping(m.Addr()); err != nil {
		t.Fatalf("PING a new master: %v", err)
	}
	if err := m.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := ping(m.Addr()); err == nil {
		t.Error("a paused master answered PING")
	}
	if err := m.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := ping(m.Addr()); err != nil {
		t.Fatalf("PING a resumed master: %v", err)
	}
}

// A cluster master holds every slot and takes writes.
func TestClusterMaster(t *testing.T) {
	m := redlocktest.NewClusterMaster(t)
	c, err := redis.Dial("tcp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := redis.String(c.Do("CLUSTER", "INFO"))
	if err != nil || !strings.Contains(info, "cluster_slots_assigned:16384") {
		t.Fatalf("CLUSTER INFO = %q, %v; want every slot assigned", info, err)
	}
	if _, err := c.Do("SET", "{k}:a", "1"); err != nil {
		t.Fatalf("SET on the cluster master: %v", err)
	}
}

// A black hole accepts a connection and never answers.
func TestBlackHole(t *testing.T) {
	if err := ping(redlocktest.NewBlackHole(t)); err == nil {
		t.Fatal("a black hole answered PING")
	}
}
