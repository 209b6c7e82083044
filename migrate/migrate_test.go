package migrate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMissingSaysHowToSupplyIt(t *testing.T) {
	require.Equal(t, `properties.password needs apiPassword: no value (supply it with --set 'apiPassword=VALUE')`,
		Missing{Name: "apiPassword", Path: "properties.password", Reason: "no value"}.String())
	require.Equal(t, `sasToken needs [listKeys('sa').keys[0].value]: not evaluated (supply it with --set '[listKeys('\''sa'\'').keys[0].value]=VALUE')`,
		Missing{Name: "[listKeys('sa').keys[0].value]", Path: "sasToken", Reason: "not evaluated"}.String())
	require.Equal(t, "resources[2].copy: a copy loop is not evaluated",
		Missing{Path: "resources[2].copy", Reason: "a copy loop is not evaluated"}.String())
}
