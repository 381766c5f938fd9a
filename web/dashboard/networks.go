package dashboard

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/sikahq/sika/web/webapp"
)

// networkRow is a network of GET /networks/ with its availability, as the networks page shows it.
type networkRow struct {
	ID           string `json:"id"`
	Code         string `json:"code"`
	Name         string `json:"name"`
	Country      string `json:"country"`
	Availability struct {
		Status    string    `json:"status"`
		Reasons   []string  `json:"reasons"`
		CheckedAt time.Time `json:"checked_at"`
	} `json:"availability"`
	CountryISO  string `json:"-"`
	CountryName string `json:"-"`
}

// networkPrediction is GET /networks/predict/'s answer.
type networkPrediction struct {
	Phone        string   `json:"phone"`
	Country      string   `json:"country"`
	Network      *string  `json:"network"`
	NetworkName  *string  `json:"network_name"`
	Carrier      *string  `json:"carrier"`
	Confidence   string   `json:"confidence"`
	MayBePorted  bool     `json:"may_be_ported"`
	Alternatives []string `json:"alternatives"`
	Uncertainty  []string `json:"uncertainty"`
}

// networksData is the networks page: each network with how it is doing in the environment,
// and the form that predicts a number's network.
type networksData struct {
	Networks   []networkRow
	CheckedAt  time.Time
	Countries  []countryChoice
	Form       *formState
	Prediction *networkPrediction
}

// countryChoice is a country of the prediction form.
type countryChoice struct{ ISO, Name string }

// networks shows every network with its availability (GET /networks/: operational, degraded
// or down, computed by the API from the routing health and the gateways' recent answers), by
// country; with ?phone= it also shows the network the API predicts for that number
// (GET /networks/predict/).
func (a *App) networks(w http.ResponseWriter, r *http.Request, v *visit) error {
	var page struct {
		Results []networkRow `json:"results"`
	}
	if err := a.call(r, v, http.MethodGet, "/networks/", url.Values{"page_size": {"100"}}, nil, "", &page); err != nil {
		return err
	}
	countries, err := a.cfg.Store.ListCountries(r.Context())
	if err != nil {
		return err
	}
	byID, names := map[string]string{}, map[string]string{}
	d := &networksData{}
	for _, c := range countries {
		byID[c.ID.String()], names[c.ISOCode] = c.ISOCode, c.Name
		d.Countries = append(d.Countries, countryChoice{ISO: c.ISOCode, Name: c.Name})
	}
	for _, n := range page.Results {
		n.CountryISO = byID[n.Country]
		n.CountryName = names[n.CountryISO]
		d.Networks = append(d.Networks, n)
		if n.Availability.CheckedAt.After(d.CheckedAt) {
			d.CheckedAt = n.Availability.CheckedAt
		}
	}
	sort.SliceStable(d.Networks, func(i, j int) bool { return d.Networks[i].CountryName < d.Networks[j].CountryName })

	q := r.URL.Query()
	country := q.Get("country")
	if country == "" && v.merchant != nil {
		country = v.merchant.Country
	}
	d.Form = newForm(map[string]string{"phone": strings.TrimSpace(q.Get("phone")), "country": country})
	if d.Form.Val("phone") != "" {
		// A number the API cannot read is said beside the field; the page itself is fine (200).
		var p networkPrediction
		err := a.call(r, v, http.MethodGet, "/networks/predict/", url.Values{"phone": {d.Form.Val("phone")}, "country": {country}}, nil, "", &p)
		if err != nil {
			if err := d.Form.refusal(v.Lang, err); err != nil {
				return err
			}
		} else {
			d.Prediction = &p
		}
	}
	return a.render(w, r, http.StatusOK, "networks", &view{visit: v, Title: "networks_title", Nav: "networks", Data: d})
}

// networksTranslations are the strings of the networks page.
var networksTranslations = webapp.Catalogue{
	"fr": {
		"nav_networks":                     "Réseaux",
		"networks_title":                   "Réseaux",
		"networks_help":                    "L'état de chaque réseau dans cet environnement, d'après la santé du routage et les réponses de ses passerelles ces 10 dernières minutes.",
		"networks_checked_at":              "Mis à jour le",
		"net_col_country":                  "Pays",
		"net_col_network":                  "Réseau",
		"net_col_code":                     "Code",
		"net_col_status":                   "État",
		"availability_operational":         "Opérationnel",
		"availability_degraded":            "Dégradé",
		"availability_down":                "Hors service",
		"reason_network_inactive":          "désactivé",
		"reason_no_gateway":                "aucune passerelle",
		"reason_all_gateways_down":         "toutes les passerelles sont en panne",
		"reason_gateway_down":              "une passerelle en panne, une autre prend le relais",
		"reason_failures":                  "beaucoup de demandes refusées ou sans réponse",
		"reason_slow":                      "réponses lentes",
		"predict_title":                    "Quel réseau pour ce numéro ?",
		"predict_help":                     "D'après les plans de numérotation : un numéro peut avoir changé d'opérateur (portabilité), et Wave accepte les numéros de tous les opérateurs.",
		"predict_phone":                    "Numéro de téléphone",
		"predict_submit":                   "Prédire",
		"predicted_network":                "Réseau probable",
		"predicted_none":                   "Aucun réseau connu pour ce numéro",
		"predicted_carrier":                "Opérateur d'après le plan",
		"predicted_confidence":             "Confiance",
		"confidence_HIGH":                  "élevée",
		"confidence_MEDIUM":                "moyenne",
		"confidence_LOW":                   "faible",
		"confidence_NONE":                  "aucune",
		"predicted_alternatives":           "Autres réseaux possibles",
		"uncertain_ported_numbers":         "les numéros peuvent être portés vers un autre opérateur dans ce pays",
		"uncertain_shared_prefix":          "d'autres réseaux acceptent ce numéro",
		"uncertain_outside_numbering_plan": "ce numéro n'est pas un numéro mobile valide du plan actuel",
		"uncertain_unknown_carrier":        "opérateur inconnu",
	},
	"en": {
		"nav_networks":                     "Networks",
		"networks_title":                   "Networks",
		"networks_help":                    "How each network is doing in this environment, from the routing health and its gateways' answers over the last 10 minutes.",
		"networks_checked_at":              "Updated",
		"net_col_country":                  "Country",
		"net_col_network":                  "Network",
		"net_col_code":                     "Code",
		"net_col_status":                   "Status",
		"availability_operational":         "Operational",
		"availability_degraded":            "Degraded",
		"availability_down":                "Down",
		"reason_network_inactive":          "switched off",
		"reason_no_gateway":                "no gateway",
		"reason_all_gateways_down":         "every gateway is down",
		"reason_gateway_down":              "a gateway is down, another one serves",
		"reason_failures":                  "many requests refused or unanswered",
		"reason_slow":                      "slow answers",
		"predict_title":                    "Which network is this number?",
		"predict_help":                     "From the numbering plans: a number may have moved to another operator (portability), and Wave takes numbers of every operator.",
		"predict_phone":                    "Phone number",
		"predict_submit":                   "Predict",
		"predicted_network":                "Likely network",
		"predicted_none":                   "No known network for this number",
		"predicted_carrier":                "Operator in the plan",
		"predicted_confidence":             "Confidence",
		"confidence_HIGH":                  "high",
		"confidence_MEDIUM":                "medium",
		"confidence_LOW":                   "low",
		"confidence_NONE":                  "none",
		"predicted_alternatives":           "Other possible networks",
		"uncertain_ported_numbers":         "numbers may be ported to another operator in this country",
		"uncertain_shared_prefix":          "other networks take this number",
		"uncertain_outside_numbering_plan": "this is not a valid mobile number of the current plan",
		"uncertain_unknown_carrier":        "unknown operator",
	},
}
