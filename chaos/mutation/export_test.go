package mutation

// Judge exposes judge to the tests.
var Judge = judge
