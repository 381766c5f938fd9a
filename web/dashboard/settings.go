package dashboard

import (
	"net/http"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// settingsData is the settings page: the environment's fee settings with their form, and the
// merchant's team.
type settingsData struct {
	Settings sika.MerchantSettings
	Form     *formState
	Team     []store.TeamMember
	Notice   string
	Modes    []string
}

// settings shows the fee settings of the environment (GET /merchant-settings/): who pays the
// fees by default, and whether an API request may choose otherwise (fee_charge_mode of the
// request counts only then); and the members of the merchant with their roles. Members are
// added by Sika support: the API has no invitation.
func (a *App) settings(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.renderSettings(w, r, v, http.StatusOK, &settingsData{Notice: notice(r)})
}

func (a *App) renderSettings(w http.ResponseWriter, r *http.Request, v *visit, status int, d *settingsData) error {
	var err error
	if err = a.call(r, v, http.MethodGet, "/merchant-settings/", nil, nil, "", &d.Settings); err != nil {
		return err
	}
	if d.Team, err = a.cfg.Store.MerchantTeam(r.Context(), v.merchant.ID); err != nil {
		return err
	}
	if d.Form == nil {
		allow := ""
		if d.Settings.AllowClientOverride {
			allow = "true"
		}
		d.Form = newForm(map[string]string{"fee_charge_mode": string(d.Settings.FeeChargeMode), "allow_client_override": allow})
	}
	d.Modes = []string{string(sika.FeeAddOn), string(sika.FeeDeducted)}
	return a.render(w, r, status, "settings", &view{visit: v, Title: "settings_title", Nav: "settings", Data: d})
}

// saveSettings changes the environment's fee settings by PATCH /merchant-settings/. The
// checkbox is absent from a form when unticked: the form says it was shown (a hidden field),
// so its absence means false.
func (a *App) saveSettings(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, "fee_charge_mode", "allow_client_override"))
	body := map[string]any{"fee_charge_mode": f.Val("fee_charge_mode")}
	if r.PostFormValue("allow_client_override_shown") != "" {
		body["allow_client_override"] = f.Val("allow_client_override") == "true"
	}
	return a.submit(w, r, v, f, http.MethodPatch, "/merchant-settings/", body, Prefix+"settings/", "done_settings_saved", func() error {
		return a.renderSettings(w, r, v, f.Status, &settingsData{Form: f})
	})
}

// settingsTranslations are the strings of the settings page.
var settingsTranslations = webapp.Catalogue{
	"fr": {
		"settings_title":             "Paramètres",
		"fee_settings":               "Frais",
		"fee_settings_help":          "Ces réglages valent pour l'environnement affiché.",
		"fee_charge_mode":            "Qui paie les frais par défaut ?",
		"fee_mode_choice_ADD_ON":     "Le client : les frais s'ajoutent au montant",
		"fee_mode_choice_DEDUCTED":   "Vous : les frais sont déduits de votre montant net",
		"allow_client_override":      "Permettre à une requête d'API de choisir (fee_charge_mode)",
		"allow_client_override_help": "Sinon, le mode par défaut s'applique, quoi que dise la requête.",
		"save":                       "Enregistrer",
		"team":                       "Équipe",
		"member_since":               "membre depuis le",
		"team_help":                  "Pour ajouter un membre à l'équipe, écrivez au support Sika.",
	},
	"en": {
		"settings_title":             "Settings",
		"fee_settings":               "Fees",
		"fee_settings_help":          "These settings apply to the environment shown.",
		"fee_charge_mode":            "Who pays the fees by default?",
		"fee_mode_choice_ADD_ON":     "The customer: fees are added to the amount",
		"fee_mode_choice_DEDUCTED":   "You: fees are deducted from your net amount",
		"allow_client_override":      "Let an API request choose (fee_charge_mode)",
		"allow_client_override_help": "Otherwise the default mode applies, whatever the request says.",
		"save":                       "Save",
		"team":                       "Team",
		"member_since":               "member since",
		"team_help":                  "To add a member to the team, write to Sika support.",
	},
}
