package master

import "time"

// Clock is a master's wall clock as a function of the simulation's time:
// it runs at Rate (1 is true time) from an anchor, and steps when told.
// Redis expires keys by this clock, and TIME reads it.
type Clock struct {
	anchorSim  time.Time
	anchorWall int64 // unix ns at anchorSim
	rate       float64
}

// NewClock returns a clock that reads sim + offset at sim and runs at rate.
func NewClock(sim time.Time, offset time.Duration, rate float64) Clock {
	if rate <= 0 {
		rate = 1
	}
	return Clock{anchorSim: sim, anchorWall: sim.UnixNano() + int64(offset), rate: rate}
}

// Wall is the clock's reading, in unix ns, at the simulation's time t.
func (c *Clock) Wall(t time.Time) int64 {
	return c.anchorWall + int64(float64(t.Sub(c.anchorSim))*c.rate)
}

// Ms and Micro are the reading in unix ms and µs (what mstime() and TIME
// give).
func (c *Clock) Ms(t time.Time) int64    { return floorDiv(c.Wall(t), 1e6) }
func (c *Clock) Micro(t time.Time) int64 { return floorDiv(c.Wall(t), 1e3) }

// Step moves the clock by d at t (forward for d > 0).
func (c *Clock) Step(t time.Time, d time.Duration) {
	c.anchorWall, c.anchorSim = c.Wall(t)+int64(d), t
}

// SetRate changes the clock's rate from t on.
func (c *Clock) SetRate(t time.Time, rate float64) {
	c.anchorWall, c.anchorSim, c.rate = c.Wall(t), t, rate
}

// SimAt is the simulation's time at which the clock will read wall (unix
// ns), as it runs now (a later step moves it).
func (c *Clock) SimAt(wall int64) time.Time {
	return c.anchorSim.Add(time.Duration(float64(wall-c.anchorWall) / c.rate))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
