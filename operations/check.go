package operations

import (
	"github.com/infra-iac/infra/spec"
)

// Check is `infra check`: the document's rows (spec.Validate), and a
// warning for every secret whose fromEnv variable this environment lacks.
// Check has no ledger and reads no cloud, so it cannot tell whether the
// secret exists already (the cloud then has its value, and only a plan
// that sends it again needs the variable): a create will need it, and
// the plan makes that an error (env-unset). getenv is the environment of
// this run; nil reads none, and warns of nothing.
func Check(doc *spec.Document, getenv func(string) string) []spec.Diagnostic {
	m, diags := spec.Compile(doc)
	if getenv == nil || doc == nil {
		return diags
	}
	var rows []spec.Diagnostic
	for i := range m.Resources {
		d := &m.Resources[i]
		info, ok := spec.Lookup(d.Address.Kind)
		if !ok {
			continue
		}
		for _, f := range info.Fields {
			env, isEnv := d.Fields[f.Name].(spec.FromEnv)
			if f.Type != spec.TypeSecretSource || !isEnv || !f.UsedOn(d.Address.Provider) || getenv(env.Var) != "" {
				continue
			}
			rows = append(rows, spec.Warnf(spec.RowEnvUnset, d.Address.String(),
				"set "+env.Var+" in the environment of the run that applies (the executor reads it from its credentials secret); once the secret exists, only an apply that sends its value again needs it",
				"its %s comes from %s, which is not set in this environment: an apply that creates it, or sends its value again, needs it", f.Name, env.Var).WithEvidence(env.Var))
		}
	}
	if len(rows) == 0 {
		return diags
	}
	return spec.SortDiagnostics(append(diags, rows...))
}
