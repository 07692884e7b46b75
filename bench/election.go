package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
)

// What a leader election costs (redlock.Election): how long a leader
// change takes, and how long an observer takes to hear of a new leader or
// of a new value. For each N there are three clients, each with a Locker
// and connections of its own, as separate processes would have: two
// candidates that take turns leading, and an observer. Each change:
//
//  1. the candidate that does not lead calls Campaign, and waits there
//     (ElectionOptions.Pause; its first attempt is refused, and it waits
//     for the release over pub/sub);
//  2. the leader Resigns: the leader change is the time from that Resign
//     call to the waiting candidate's Campaign returning (the release, its
//     announcement, the candidate's lock, and its record write);
//  3. the observer's Observe channel delivers the new term: the time from
//     Campaign returning to that delivery;
//  4. the new leader Proclaims a new value: the time from Proclaim
//     returning to its delivery.
//
// A delivery can come before the call that caused it returned (an
// observer reads the record as soon as the masters announce it, and the
// caller still waits for its quorum's replies): it counts as zero, and as
// early. The N take turns in rotating order (ElectionOptions.Rounds), so
// that drift in the machine's speed spreads over all of them.

// ElectionOptions configures Election. A zero field means its default.
type ElectionOptions struct {
	// Nodes lists the N to measure; default 1, 3, 5.
	Nodes []int `json:"nodes"`
	// Changes is the number of leader changes per N; default 300.
	Changes int `json:"changes"`
	// Rounds is how many turns each N gets, Changes/Rounds changes each;
	// default 10.
	Rounds int `json:"rounds"`
	// Pause is how long the candidate waits in Campaign before the leader
	// resigns; default 20ms.
	Pause time.Duration `json:"pause_ns"`
	// TTL is the election's ttl (redlock.NewElection); default
	// Settings.TTL, 8s: observers then read the leader at least every
	// second besides the announcements.
	TTL time.Duration `json:"ttl_ns"`
	// Timeout bounds each Campaign, Resign and Proclaim, and the wait for
	// each delivery; default 5s.
	Timeout time.Duration `json:"timeout_ns"`
	// Settings are the clients'; see Settings.
	Settings Settings `json:"settings"`
	// Log, if not nil, gets a line per turn.
	Log io.Writer `json:"-"`
}

// ShortElectionOptions are tiny counts for tests; their numbers mean
// little.
func ShortElectionOptions() ElectionOptions {
	return ElectionOptions{Changes: 4, Rounds: 2, Pause: 5 * time.Millisecond, Timeout: 3 * time.Second}
}

func (o ElectionOptions) withDefaults() ElectionOptions {
	if len(o.Nodes) == 0 {
		o.Nodes = []int{1, 3, 5}
	}
	o.Changes = cmp.Or(o.Changes, 300)
	o.Rounds = max(1, min(cmp.Or(o.Rounds, 10), o.Changes))
	o.Pause = cmp.Or(o.Pause, 20*time.Millisecond)
	o.Settings = o.Settings.withDefaults()
	o.TTL = cmp.Or(o.TTL, o.Settings.TTL)
	o.Timeout = cmp.Or(o.Timeout, 5*time.Second)
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// ElectionReport is the result of Election.
type ElectionReport struct {
	Started     time.Time       `json:"started"`
	WallSeconds float64         `json:"wall_seconds"`
	Env         Env             `json:"env"`
	Options     ElectionOptions `json:"options"`
	Rows        []ElectionRow   `json:"rows"`
}

// ElectionRow is one N's measurements.
type ElectionRow struct {
	Nodes int `json:"nodes"`
	// Change is a leader change: Resign called to the next leader's
	// Campaign returned.
	Change Dist `json:"change"`
	// Campaign is a new term's notification: the new leader's Campaign
	// returned to the observer's channel delivering its term.
	Campaign Dist `json:"observe_campaign"`
	// Proclaim is a new value's notification: Proclaim returned to the
	// observer's channel delivering the value.
	Proclaim Dist `json:"observe_proclaim"`
	// Early counts the deliveries that came before the Campaign or
	// Proclaim returned; they count as zero in Campaign and Proclaim.
	Early int64 `json:"early"`
	// Missed counts the notifications the observer did not deliver within
	// ElectionOptions.Timeout.
	Missed int64 `json:"missed"`
	// Errors counts the Campaign, Resign and Proclaim calls that failed.
	Errors     int64  `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
}

// Election starts max(Nodes) redis-server processes, measures leader
// changes and their notifications for each N, and stops them. Cancelling
// ctx stops the run between turns.
func Election(ctx context.Context, o ElectionOptions) (*ElectionReport, error) {
	o = o.withDefaults()
	r := &ElectionReport{Started: time.Now(), Env: env(), Options: o}
	var addrs []string
	for range slices.Max(o.Nodes) {
		srv, err := redisproc.Start(redisproc.Options{})
		if err != nil {
			return nil, err
		}
		defer srv.Close()
		addrs = append(addrs, srv.Addr())
	}
	if err := Register(ctx, addrs, o.Settings.TTL); err != nil {
		return nil, err
	}
	var steal stealMeter
	steal.begin()
	es := make([]*electionN, len(o.Nodes))
	defer func() {
		for _, e := range es {
			if e != nil {
				e.close()
			}
		}
	}()
	for i, n := range o.Nodes {
		e, err := newElectionN(ctx, o, addrs[:n], key("election", i, n))
		if err != nil {
			return nil, err
		}
		es[i] = e
	}
	var err error
	for round := range o.Rounds {
		changes := o.Changes / o.Rounds
		if round < o.Changes%o.Rounds {
			changes++
		}
		for i := range es {
			e := es[(i+round)%len(es)]
			if err = ctx.Err(); err != nil {
				break
			}
			if err = e.turn(ctx, changes); err != nil {
				break
			}
			nerr, _ := e.errs.get()
			fmt.Fprintf(o.Log, "election N=%d round %d: %d changes so far, %d errors, %d missed\n",
				e.row.Nodes, round, e.change.TotalCount(), nerr, e.row.Missed)
		}
		if err != nil {
			break
		}
	}
	for _, e := range es {
		r.Rows = append(r.Rows, e.result())
	}
	r.WallSeconds = time.Since(r.Started).Seconds()
	r.Env.LoadEnd = loadavg()
	steal.end()
	r.Env.StealPercent = steal.percent()
	return r, err
}

// electionN is one N's clients and measurements.
type electionN struct {
	o       ElectionOptions
	clients []*oursLocker // the two candidates and the observer
	cands   [2]*redlock.Election
	leader  int // the candidate that leads
	stop    context.CancelFunc
	seen    chan delivery // the observer's deliveries
	done    chan struct{} // closed when the observer's goroutine ends
	seq     int           // makes every value unique

	row                        ElectionRow
	change, campaign, proclaim *hdrhistogram.Histogram
	errs                       errCount
}

// delivery is a leader the observer's channel delivered, and when.
type delivery struct {
	ldr redlock.Leader
	at  time.Time
}

// newElectionN makes the clients on addrs for the election name, starts
// the observer, and has the first candidate lead (untimed).
func newElectionN(ctx context.Context, o ElectionOptions, addrs []string, name string) (*electionN, error) {
	e := &electionN{o: o, row: ElectionRow{Nodes: len(addrs)},
		change: newHist(), campaign: newHist(), proclaim: newHist(),
		seen: make(chan delivery, 1024), done: make(chan struct{})}
	elections := make([]*redlock.Election, 3)
	for i := range elections {
		c, err := oursWith(addrs, o.Settings, false, redlock.Config{})
		if err != nil {
			e.close()
			return nil, err
		}
		e.clients = append(e.clients, c)
		if elections[i], err = redlock.NewElection(c.l, name, o.TTL); err != nil {
			e.close()
			return nil, err
		}
	}
	e.cands = [2]*redlock.Election{elections[0], elections[1]}
	octx, stop := context.WithCancel(context.WithoutCancel(ctx))
	e.stop = stop
	ch := elections[2].Observe(octx)
	go func() {
		defer close(e.done)
		for ldr := range ch {
			select {
			case e.seen <- delivery{ldr, time.Now()}:
			default: // the measurement waits for none of these
			}
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if err := e.cands[0].Campaign(cctx, e.value()); err != nil {
		e.close()
		return nil, fmt.Errorf("bench: election N=%d: first campaign: %w", len(addrs), err)
	}
	return e, nil
}

// value returns a value no candidate used before.
func (e *electionN) value() string {
	e.seq++
	return fmt.Sprintf("v%d", e.seq)
}

// turn makes changes leader changes.
func (e *electionN) turn(ctx context.Context, changes int) error {
	for range changes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := e.once(ctx); err != nil {
			return err
		}
	}
	return nil
}

// once makes one leader change, then one proclaim, and records them. A
// failed call is an error of the row; once returns an error only when
// no candidate can be made to lead again.
func (e *electionN) once(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx) // a change, once begun, ends
	cur, next := e.cands[e.leader], e.cands[1-e.leader]
	value := e.value()
	type result struct {
		err error
		at  time.Time
	}
	won := make(chan result, 1)
	go func() {
		cctx, cancel := context.WithTimeout(ctx, e.o.Timeout+e.o.Pause)
		defer cancel()
		err := next.Campaign(cctx, value)
		won <- result{err, time.Now()}
	}()
	time.Sleep(e.o.Pause)
	rctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	start := time.Now()
	err := cur.Resign(rctx)
	cancel()
	e.fail(err)
	res := <-won
	if res.err != nil {
		e.fail(res.err)
		return e.recover(ctx)
	}
	e.leader = 1 - e.leader
	record(e.change, res.at.Sub(start))
	e.observed(e.campaign, next.Term(), value, res.at)

	value = e.value()
	pctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	err = next.Proclaim(pctx, value)
	cancel()
	if err != nil {
		e.fail(err)
		return nil
	}
	e.observed(e.proclaim, next.Term(), value, time.Now())
	return nil
}

// observed waits for the observer to deliver term with value and records
// the time from since to the delivery in h.
func (e *electionN) observed(h *hdrhistogram.Histogram, term int64, value string, since time.Time) {
	timeout := time.NewTimer(e.o.Timeout)
	defer timeout.Stop()
	for {
		select {
		case d := <-e.seen:
			if d.ldr.Term != term || d.ldr.Value != value {
				continue // an earlier leader or value
			}
			lat := d.at.Sub(since)
			if lat < 0 {
				e.row.Early++
				lat = 0
			}
			record(h, lat)
			return
		case <-timeout.C:
			e.row.Missed++
			return
		}
	}
}

// recover has the first candidate lead again after a failed change.
func (e *electionN) recover(ctx context.Context) error {
	for _, c := range e.cands {
		rctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
		e.fail(c.Resign(rctx))
		cancel()
	}
	cctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	defer cancel()
	e.leader = 0
	if err := e.cands[0].Campaign(cctx, e.value()); err != nil {
		return fmt.Errorf("bench: election N=%d: campaigning again after a failed change: %w", e.row.Nodes, err)
	}
	return nil
}

// fail counts err, if not nil, as an error of the row.
func (e *electionN) fail(err error) {
	if err != nil {
		e.errs.add(err)
	}
}

// result returns the row.
func (e *electionN) result() ElectionRow {
	r := e.row
	r.Change, r.Campaign, r.Proclaim = distOf(e.change), distOf(e.campaign), distOf(e.proclaim)
	r.Errors, r.FirstError = e.errs.get()
	return r
}

// close resigns, stops the observer and closes the clients.
func (e *electionN) close() {
	ctx, cancel := context.WithTimeout(context.Background(), e.o.Timeout)
	defer cancel()
	for _, c := range e.cands {
		if c != nil {
			_ = c.Resign(ctx)
		}
	}
	if e.stop != nil {
		e.stop()
		<-e.done
	}
	for _, c := range e.clients {
		_ = c.l.Close(ctx)
		_ = c.Close()
	}
}

// PrintElection writes r as a table: per N, the leader change and the two
// notifications, p50 and p99 in milliseconds.
func PrintElection(w io.Writer, r *ElectionReport) {
	fmt.Fprintf(w, "leader election: %d changes per N in %d rounds, candidate waiting %v in Campaign, ttl %v; %d CPUs, load %s to %s",
		r.Options.Changes, r.Options.Rounds, r.Options.Pause, r.Options.TTL, r.Env.NumCPU, r.Env.LoadStart, r.Env.LoadEnd)
	if r.Env.StealPercent != nil {
		fmt.Fprintf(w, ", steal %.2f%%", *r.Env.StealPercent)
	}
	fmt.Fprintf(w, "; %s\n\n", r.Env.Redis)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "N\tchanges\tchange p50 ms\tp99 ms\tmax ms\tobserve campaign p50 ms\tp99 ms\tmax ms\tobserve proclaim p50 ms\tp99 ms\tmax ms\tearly\tmissed\terrors\t")
	ms := func(us float64) string { return fmt.Sprintf("%.3f", us/1000) }
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t\n", x.Nodes, x.Change.Count,
			ms(x.Change.P50), ms(x.Change.P99), ms(x.Change.Max),
			ms(x.Campaign.P50), ms(x.Campaign.P99), ms(x.Campaign.Max),
			ms(x.Proclaim.P50), ms(x.Proclaim.P99), ms(x.Proclaim.Max),
			x.Early, x.Missed, x.Errors)
	}
	tw.Flush()
	for _, x := range r.Rows {
		if x.FirstError != "" {
			fmt.Fprintf(w, "N=%d: first error: %s\n", x.Nodes, x.FirstError)
		}
	}
}
