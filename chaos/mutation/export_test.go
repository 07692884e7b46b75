package mutation

// Judge exposes judge to the tests.
var Judge = judge

// BaselineSkipped exposes baselineSkipped to the tests.
const BaselineSkipped = baselineSkipped
