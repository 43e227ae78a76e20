// Package goname turns spec's kebab-case and camelCase names into exported
// Go identifiers, for the generators that write Go from spec's tables (the
// fleet SDK, the drivers' typed inputs): one spelling rule, so a field is
// named alike wherever it is generated.
package goname

import "strings"

var acronyms = map[string]string{
	"arn": "ARN", "id": "ID", "url": "URL", "uri": "URI", "vpc": "VPC", "ip": "IP", "mb": "MB",
	"cpu": "CPU", "iam": "IAM", "alb": "ALB", "aws": "AWS", "sql": "SQL", "uae": "UAE", "ns": "NS",
}

// Of turns a kebab-case or camelCase name into an exported Go name.
func Of(s string) string {
	var words []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '.' || r == '_' }) {
		start := 0
		for i := 1; i < len(part); i++ {
			if part[i] >= 'A' && part[i] <= 'Z' && !(part[i-1] >= 'A' && part[i-1] <= 'Z') {
				words = append(words, part[start:i])
				start = i
			}
		}
		words = append(words, part[start:])
	}
	var b strings.Builder
	for _, w := range words {
		if a, ok := acronyms[strings.ToLower(w)]; ok {
			b.WriteString(a)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}
