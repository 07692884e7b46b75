package cluster

// SetFreePort makes the Docker backend pick its nodes' ports with f until
// the returned function restores the default.
func SetFreePort(f func() (int, error)) (restore func()) {
	old := freePort
	freePort = f
	return func() { freePort = old }
}
