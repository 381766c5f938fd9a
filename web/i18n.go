package web

// translations holds every string of the pages, French first.
var translations = map[string]map[string]string{
	"fr": {
		"title":                      "Paiement",
		"pay_to":                     "Paiement à",
		"amount":                     "Montant",
		"amount_min":                 "Montant minimum",
		"country":                    "Pays",
		"network":                    "Réseau de paiement",
		"choose_network":             "Choisissez votre réseau",
		"phone":                      "Numéro de téléphone",
		"phone_help":                 "Le numéro de votre compte mobile money.",
		"phone_known_help":           "Laissez vide pour payer avec le numéro",
		"name":                       "Nom complet",
		"email":                      "Adresse e-mail (facultatif)",
		"otp":                        "Code de paiement",
		"otp_help":                   "Obtenez le code avant de payer :",
		"pay":                        "Payer",
		"paying":                     "Envoi en cours…",
		"check_phone":                "Vérifiez votre téléphone",
		"check_phone_help":           "Une demande de paiement a été envoyée sur votre téléphone. Validez-la avec votre code secret. Cette page se met à jour automatiquement.",
		"otp_push":                   "Saisissez le code reçu",
		"otp_push_help":              "Vous avez reçu un code par SMS. Saisissez-le pour confirmer le paiement.",
		"confirm":                    "Confirmer",
		"redirect_help":              "Terminez le paiement dans l'application de votre opérateur :",
		"open_app":                   "Ouvrir l'application",
		"success":                    "Paiement réussi",
		"success_help":               "Merci ! Votre paiement a bien été reçu. Vous pouvez fermer cette page.",
		"failure":                    "Le paiement a échoué",
		"failure_help":               "Aucun montant n'a été débité. Vous pouvez réessayer, avec un autre numéro ou un autre réseau si besoin.",
		"retry":                      "Réessayer",
		"closed_PAID":                "Cette commande est déjà payée.",
		"closed_EXPIRED":             "Cette page de paiement a expiré.",
		"closed_CANCELLED":           "Ce paiement a été annulé par le marchand.",
		"closed_INACTIVE":            "Ce lien de paiement est désactivé.",
		"closed_USED_UP":             "Ce lien de paiement a atteint son nombre maximal de paiements.",
		"needs_javascript":           "Cette page de paiement a besoin de JavaScript : activez-le pour payer.",
		"test_mode":                  "Mode test : aucun argent réel n'est débité.",
		"switch_lang":                "English",
		"reference":                  "Référence",
		"error_generic":              "Une erreur est survenue. Réessayez dans un instant.",
		"page_not_found":             "Cette page de paiement n'existe pas.",
		"error_network":              "Connexion impossible. Vérifiez votre connexion et réessayez.",
		"error_min_amount":           "Le montant doit être d'au moins",
		"error_in_progress":          "Un paiement de cette commande est déjà en cours, peut-être sur un autre appareil. Validez-le ou attendez son résultat avant de réessayer.",
		"no_network":                 "Aucun réseau n'est disponible pour ce pays.",
		"network_detected":           "Réseau choisi d'après votre numéro :",
		"network_detected_check":     "vérifiez-le, un numéro peut avoir changé d'opérateur.",
		"secure":                     "Paiement sécurisé par Sika",
		"field_required":             "Ce champ est obligatoire.",
		"status_region_name":         "État du paiement",
		"failure_payer_declined":     "Vous avez refusé la demande de paiement.",
		"failure_insufficient_funds": "Le solde de votre compte est insuffisant.",
		"failure_invalid_number":     "Ce numéro n'est pas un compte mobile money valide.",
		"failure_expired":            "La demande de paiement a expiré sans validation.",
		"failure_invalid_otp":        "Le code saisi n'est pas valide.",
	},
	"en": {
		"title":                      "Payment",
		"pay_to":                     "Payment to",
		"amount":                     "Amount",
		"amount_min":                 "Minimum amount",
		"country":                    "Country",
		"network":                    "Payment network",
		"choose_network":             "Choose your network",
		"phone":                      "Phone number",
		"phone_help":                 "The number of your mobile-money account.",
		"phone_known_help":           "Leave empty to pay with the number",
		"name":                       "Full name",
		"email":                      "Email address (optional)",
		"otp":                        "Payment code",
		"otp_help":                   "Get the code before paying:",
		"pay":                        "Pay",
		"paying":                     "Sending…",
		"check_phone":                "Check your phone",
		"check_phone_help":           "A payment request was sent to your phone. Approve it with your PIN. This page updates by itself.",
		"otp_push":                   "Enter the code you received",
		"otp_push_help":              "You received a code by SMS. Enter it to confirm the payment.",
		"confirm":                    "Confirm",
		"redirect_help":              "Finish the payment in your operator's app:",
		"open_app":                   "Open the app",
		"success":                    "Payment successful",
		"success_help":               "Thank you! Your payment was received. You may close this page.",
		"failure":                    "The payment failed",
		"failure_help":               "Nothing was debited. You can try again, with another number or network if needed.",
		"retry":                      "Try again",
		"closed_PAID":                "This order is already paid.",
		"closed_EXPIRED":             "This payment page has expired.",
		"closed_CANCELLED":           "This payment was cancelled by the merchant.",
		"closed_INACTIVE":            "This payment link is disabled.",
		"closed_USED_UP":             "This payment link has reached its maximum number of payments.",
		"needs_javascript":           "This payment page needs JavaScript: turn it on to pay.",
		"test_mode":                  "Test mode: no real money is taken.",
		"switch_lang":                "Français",
		"reference":                  "Reference",
		"error_generic":              "Something went wrong. Try again in a moment.",
		"page_not_found":             "This payment page does not exist.",
		"error_network":              "Cannot connect. Check your connection and try again.",
		"error_min_amount":           "The amount must be at least",
		"error_in_progress":          "A payment for this order is already in progress, perhaps on another device. Approve it or wait for its outcome before trying again.",
		"no_network":                 "No network is available for this country.",
		"network_detected":           "Network picked from your number:",
		"network_detected_check":     "check it, a number may have moved to another operator.",
		"secure":                     "Payment secured by Sika",
		"field_required":             "This field is required.",
		"status_region_name":         "Payment status",
		"failure_payer_declined":     "You declined the payment request.",
		"failure_insufficient_funds": "Your account balance is too low.",
		"failure_invalid_number":     "This number is not a valid mobile-money account.",
		"failure_expired":            "The payment request expired before it was approved.",
		"failure_invalid_otp":        "The code is not valid.",
	},
}

// scriptKeys are the strings the page script shows.
var scriptKeys = []string{"pay", "paying", "error_generic", "error_network", "error_min_amount", "error_in_progress", "no_network",
	"network_detected", "network_detected_check",
	"closed_PAID", "closed_EXPIRED", "closed_CANCELLED", "closed_INACTIVE", "closed_USED_UP", "field_required", "otp_help",
	"failure_payer_declined", "failure_insufficient_funds", "failure_invalid_number", "failure_expired", "failure_invalid_otp"}

func translate(lang, key string) string {
	if s, ok := translations[lang][key]; ok {
		return s
	}
	return translations["fr"][key]
}

// countryNames are the countries' names in French and in English, the catalogue's (the store
// keeps English names: "Benin").
var countryNames = map[string][2]string{
	"BJ": {"Bénin", "Benin"}, "CI": {"Côte d'Ivoire", "Côte d'Ivoire"}, "SN": {"Sénégal", "Senegal"}, "TG": {"Togo", "Togo"},
	"BF": {"Burkina Faso", "Burkina Faso"}, "ML": {"Mali", "Mali"}, "NE": {"Niger", "Niger"}, "GN": {"Guinée", "Guinea"},
	"CM": {"Cameroun", "Cameroon"}, "GA": {"Gabon", "Gabon"}, "CG": {"Congo", "Congo"}, "CD": {"RD Congo", "DR Congo"},
}

// CountryName is a country's name in lang: its French name, or on an English page the
// catalogue's name. The hosted pages, the dashboard and the console name countries through it.
func CountryName(lang, iso, name string) string {
	if names, ok := countryNames[iso]; ok && lang != "en" {
		return names[0]
	}
	return name
}

// CountryNamed is the country a message names by its catalogue (English) name, in lang; any
// other word is itself.
func CountryNamed(lang, name string) string {
	for iso, names := range countryNames {
		if names[1] == name {
			return CountryName(lang, iso, name)
		}
	}
	return name
}

// Colon is s followed by a colon as lang writes it ("Montant :" with a no-break space in
// French, "Amount:" in English).
func Colon(s, lang string) string {
	if lang == "en" {
		return s + ":"
	}
	return s + "\u00a0:"
}
