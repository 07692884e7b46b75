package master

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Scripts run as Redis runs them, in Lua 5.1 (gopher-lua) with redis.call
// bound to the master's keyspace, and with Redis's conversions between Lua
// values and replies:
//
//   - a reply to redis.call: an integer becomes a number, a bulk string a
//     string, a nil bulk false, an array a table (nil elements false), a
//     status reply a table {ok = ...}; an error reply raises an error;
//   - a script's result: a number becomes an integer (truncated), a string
//     a bulk string, true 1, false and nil a nil reply, a table an array (up
//     to its first nil), or an error reply when it has an err field, a
//     status reply when it has an ok field.
//
// A script is compiled once per process (by its source), and run on one
// Lua state at a time (an engine); engines are pooled.

func init() {
	// Redis's Lua gives a vararg function no 'arg' table, and the chunks
	// of the library's scripts use none: without it a call allocates no
	// table for its arguments.
	lua.CompatVarArg = false
}

// protos caches the compiled scripts by source.
var protos sync.Map // string -> *lua.FunctionProto

func compile(src string) (*lua.FunctionProto, error) {
	if p, ok := protos.Load(src); ok {
		return p.(*lua.FunctionProto), nil
	}
	chunk, err := parse.Parse(strings.NewReader(src), "user_script")
	if err != nil {
		return nil, err
	}
	p, err := lua.Compile(chunk, "user_script")
	if err != nil {
		return nil, err
	}
	protos.Store(src, p)
	return p, nil
}

// engine is one Lua state with redis.call bound to whichever keyspace runs
// a script on it at the moment.
type engine struct {
	L            *lua.LState
	fns          map[*lua.FunctionProto]*lua.LFunction
	keys, args   *lua.LTable // KEYS and ARGV, refilled for every script
	nkeys, nargs int
	ok           *lua.LTable // the status reply OK, made once (redis.call('SET') answers it)
	ks           *Keyspace
	env          *Env
	argv         []string // reused for redis.call's arguments
}

var engines = sync.Pool{New: func() any { return newEngine() }}

func newEngine() *engine {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 64, RegistrySize: 1024})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	e := &engine{L: L, fns: map[*lua.FunctionProto]*lua.LFunction{}}
	e.keys, e.args = L.CreateTable(8, 0), L.CreateTable(8, 0)
	L.SetGlobal("KEYS", e.keys)
	L.SetGlobal("ARGV", e.args)
	e.ok = L.CreateTable(0, 1)
	e.ok.RawSetString("ok", lua.LString("OK"))
	redis := L.NewTable()
	redis.RawSetString("call", L.NewFunction(e.call))
	redis.RawSetString("pcall", L.NewFunction(e.pcall))
	redis.RawSetString("error_reply", L.NewFunction(func(L *lua.LState) int {
		t := L.NewTable()
		t.RawSetString("err", lua.LString(L.CheckString(1)))
		L.Push(t)
		return 1
	}))
	redis.RawSetString("status_reply", L.NewFunction(func(L *lua.LState) int {
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(L.CheckString(1)))
		L.Push(t)
		return 1
	}))
	L.SetGlobal("redis", redis)
	return e
}

// Eval runs the script src on ks with KEYS and ARGV, and returns its reply
// (an Error for an error reply).
func (ks *Keyspace) Eval(env *Env, src string, keys, argv []string) any {
	p, err := compile(src)
	if err != nil {
		return Error("ERR Error compiling script (new function): " + err.Error())
	}
	e := engines.Get().(*engine)
	defer engines.Put(e)
	e.ks, e.env = ks, env
	defer func() { e.ks, e.env = nil, nil }()
	L := e.L
	e.nkeys = fill(e.keys, keys, e.nkeys)
	e.nargs = fill(e.args, argv, e.nargs)
	fn := e.fns[p]
	if fn == nil {
		fn = L.NewFunctionFromProto(p)
		e.fns[p] = fn
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		L.SetTop(0)
		msg := err.Error()
		if le, ok := err.(*lua.ApiError); ok {
			if s, ok := le.Object.(lua.LString); ok {
				msg = string(s)
			}
		}
		if !strings.HasPrefix(msg, "ERR ") && !strings.HasPrefix(msg, "WRONGTYPE ") {
			msg = "ERR " + msg
		}
		return Error(msg)
	}
	ret := L.Get(-1)
	L.SetTop(0)
	return fromLua(ret)
}

// fill makes t the array ss (it held prev elements) and returns len(ss).
func fill(t *lua.LTable, ss []string, prev int) int {
	for i, s := range ss {
		t.RawSetInt(i+1, lua.LString(s))
	}
	for i := len(ss) + 1; i <= prev; i++ {
		t.RawSetInt(i, lua.LNil)
	}
	return len(ss)
}

// call is redis.call: an error reply raises a Lua error.
func (e *engine) call(L *lua.LState) int {
	r := e.do(L)
	if err, ok := r.(Error); ok {
		L.RaiseError("%s", string(err))
		return 0
	}
	if r == Status("OK") {
		L.Push(e.ok) // the common status reply, made once
		return 1
	}
	L.Push(toLua(L, r))
	return 1
}

// pcall is redis.pcall: an error reply comes back as a table {err = ...}.
func (e *engine) pcall(L *lua.LState) int {
	L.Push(toLua(L, e.do(L)))
	return 1
}

// do runs the command whose arguments are on L's stack.
func (e *engine) do(L *lua.LState) any {
	n := L.GetTop()
	if n == 0 {
		return Error("ERR Please specify at least one argument for this redis lib call")
	}
	argv := e.argv[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			argv = append(argv, string(v))
		case lua.LNumber:
			argv = append(argv, formatNumber(float64(v)))
		default:
			return Error("ERR Lua redis lib command arguments must be strings or integers")
		}
	}
	e.argv = argv
	return e.ks.Do(e.env, argv)
}

// formatNumber formats a Lua number given to redis.call as Redis 7 does
// (the shortest form that reads back the same: integers in decimal).
func formatNumber(f float64) string {
	switch {
	case f == math.Trunc(f) && math.Abs(f) < 1e18:
		return strconv.FormatInt(int64(f), 10)
	case math.Abs(f) < 1e21 && math.Abs(f) >= 1e-6:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// toLua converts a reply to the Lua value a script sees.
func toLua(L *lua.LState, r any) lua.LValue {
	switch r := r.(type) {
	case nil:
		return lua.LFalse
	case int64:
		return lua.LNumber(r)
	case []byte:
		return lua.LString(r)
	case string:
		return lua.LString(r)
	case Status:
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(r))
		return t
	case Error:
		t := L.CreateTable(0, 1)
		t.RawSetString("err", lua.LString(r))
		return t
	case []any:
		t := L.CreateTable(len(r), 0)
		for i, x := range r {
			t.RawSetInt(i+1, toLua(L, x))
		}
		return t
	}
	panic(fmt.Sprintf("master: reply of type %T", r))
}

// fromLua converts a script's result to its reply.
func fromLua(v lua.LValue) any {
	switch v := v.(type) {
	case lua.LNumber:
		return int64(float64(v))
	case lua.LString:
		return []byte(string(v))
	case lua.LBool:
		if v {
			return int64(1)
		}
		return nil
	case *lua.LTable:
		if e, ok := v.RawGetString("err").(lua.LString); ok {
			return Error(withCode(string(e)))
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			return Status(string(s))
		}
		out := []any{}
		for i := 1; ; i++ {
			x := v.RawGetInt(i)
			if x == lua.LNil {
				break
			}
			out = append(out, fromLua(x))
		}
		return out
	}
	return nil
}

// withCode gives an error reply an error code ("ERR ") when its message
// does not start with one, as Redis does.
func withCode(msg string) string {
	code, _, _ := strings.Cut(msg, " ")
	if len(code) >= 2 && strings.ToUpper(code) == code && strings.Trim(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
		return msg
	}
	return "ERR " + msg
}
