package master_test

import "fmt"

func show(v any) string {
	if a, ok := v.([]any); ok {
		s := "[]interface {}{"
		for i, x := range a {
			if i > 0 {
				s += ", "
			}
			s += fmt.Sprint(x)
		}
		return s + "}"
	}
	return fmt.Sprintf("%#v", v)
}
