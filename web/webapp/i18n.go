package webapp

import "github.com/sikahq/sika/web"

// Catalogue holds the strings of an app by language ("fr", "en") and key.
type Catalogue map[string]map[string]string

// Text is the text of key in lang; a key a language lacks falls back to French, and an unknown
// key shows as itself (each app's translation test keeps that from happening).
func (c Catalogue) Text(lang, key string) string {
	if s, ok := c[lang][key]; ok {
		return s
	}
	if s, ok := c["fr"][key]; ok {
		return s
	}
	return key
}

// Country is a country's name in lang (web.CountryName: the store's catalogue keeps English
// names, "Benin"; a French page says "Bénin").
func (c Catalogue) Country(lang, iso, name string) string { return web.CountryName(lang, iso, name) }

// Merge joins the kit's strings (Shared) and those of each part of an app (each page family
// keeps its own in its file); a key given twice is a mistake and panics at start.
func Merge(parts ...Catalogue) Catalogue {
	out := Catalogue{}
	for _, part := range append([]Catalogue{Shared}, parts...) {
		for lang, strs := range part {
			if out[lang] == nil {
				out[lang] = map[string]string{}
			}
			for k, v := range strs {
				if _, dup := out[lang][k]; dup {
					panic("webapp: translation key " + k + " given twice")
				}
				out[lang][k] = v
			}
		}
	}
	return out
}

// Shared are the strings of the kit's frame, login form and error page, and the names both apps
// show: statuses, types, triggers, attempts, countries.
var Shared = Catalogue{
	"fr": {
		"other_lang":             "en",
		"switch_lang":            "English",
		"skip_to_content":        "Aller au contenu",
		"logout":                 "Se déconnecter",
		"email":                  "Adresse e-mail",
		"password":               "Mot de passe",
		"login_button":           "Se connecter",
		"login_required":         "Saisissez votre adresse e-mail et votre mot de passe.",
		"wrong_credentials":      "Adresse e-mail ou mot de passe incorrect.",
		"too_many_attempts":      "Trop de tentatives. Réessayez un peu plus tard.",
		"too_many_attempts_wait": "Trop de tentatives. Réessayez dans %d s.",
		"session_expired":        "Votre session a expiré. Reconnectez-vous.",
		"signed_out":             "Vous êtes déconnecté.",
		"error_code":             "Code",
		"error_method":           "Méthode non autorisée.",
		"error_internal":         "Une erreur est survenue. Réessayez dans un instant.",
		"error_bad_request":      "Demande invalide.",

		"col_date":          "Date",
		"col_reference":     "Référence",
		"col_amount":        "Montant",
		"col_actions":       "Actions",
		"col_status":        "Statut",
		"col_name":          "Nom",
		"col_customer":      "Client",
		"col_network":       "Réseau",
		"col_merchant":      "Marchand",
		"open_merchant":     "Voir le marchand",
		"description":       "Description",
		"gateway_reference": "Référence opérateur",
		"transaction_id":    "Identifiant",
		"search":            "Rechercher",
		"reference":         "Référence",
		"failure":           "Échec",
		"amounts":           "Montants",
		"requested_amount":  "Montant demandé",
		"fees":              "Frais",
		"details":           "Détails",
		"customer":          "Client",
		"phone":             "Téléphone",
		"recipient":         "Bénéficiaire",
		"created_at":        "Créée le",
		"completed_at":      "Terminée le",
		"timeline":          "Historique des statuts",
		"from_status":       "depuis",
		"gateway":           "Passerelle",
		"last_answer":       "Dernière réponse",
		"no_document":       "Aucun document.",

		"transaction_title":        "Transaction",
		"status_AWAITING_APPROVAL": "En attente d'approbation",
		"status_PENDING":           "En attente",
		"status_SUCCESS":           "Réussie",
		"status_FAILED":            "Échouée",
		"status_CANCELLED":         "Annulée",
		"attempt_PENDING":          "En cours",
		"attempt_SUCCESS":          "Réussie",
		"attempt_FAILED":           "Échouée",
		"type_PAIEMENT":            "Paiement",
		"type_RECHARGE":            "Recharge",
		"type_RETRAIT":             "Retrait",
		"type_TRANSFERT":           "Transfert",
		"type_REMBOURSEMENT":       "Remboursement",
		"trigger_SYSTEM":           "Sika",
		"trigger_ADMIN":            "Support Sika",
		"trigger_CLIENT":           "Demande du marchand",
		"trigger_WEBHOOK_CALLBACK": "Notification de l'opérateur",

		"reason_payment_requested":    "Paiement demandé",
		"reason_checkout_requested":   "Paiement demandé sur la page de paiement",
		"reason_link_requested":       "Paiement demandé sur la page du lien de paiement",
		"reason_payout_requested":     "Retrait demandé",
		"reason_settlement_requested": "Reversement demandé",
		"reason_transfer_requested":   "Transfert entre portefeuilles demandé",
		"reason_refund_requested":     "Remboursement de %s demandé",
		"reason_confirmed":            "Confirmé",
		"reason_confirmed_callback":   "Confirmé par la notification de %s",
		"reason_confirmed_by":         "Confirmé par %s",
		"reason_refused_by":           "Refusé par %s\u00a0: %t",
		"reason_awaiting_operator":    "En attente de la réponse finale de l'opérateur\u00a0: le retrait est parti, l'opérateur ne l'a pas encore confirmé. Le montant reste bloqué jusqu'à sa réponse.",
	},
	"en": {
		"other_lang":             "fr",
		"switch_lang":            "Français",
		"skip_to_content":        "Skip to content",
		"logout":                 "Log out",
		"email":                  "Email address",
		"password":               "Password",
		"login_button":           "Log in",
		"login_required":         "Enter your email address and your password.",
		"wrong_credentials":      "Wrong email or password.",
		"too_many_attempts":      "Too many attempts. Try again a little later.",
		"too_many_attempts_wait": "Too many attempts. Try again in %d seconds.",
		"session_expired":        "Your session has expired. Log in again.",
		"signed_out":             "You are logged out.",
		"error_code":             "Code",
		"error_method":           "Method not allowed.",
		"error_internal":         "Something went wrong. Try again in a moment.",
		"error_bad_request":      "Invalid request.",

		"col_date":          "Date",
		"col_reference":     "Reference",
		"col_amount":        "Amount",
		"col_actions":       "Actions",
		"col_status":        "Status",
		"col_name":          "Name",
		"col_customer":      "Customer",
		"col_network":       "Network",
		"col_merchant":      "Merchant",
		"open_merchant":     "Open merchant",
		"description":       "Description",
		"gateway_reference": "Operator reference",
		"transaction_id":    "ID",
		"search":            "Search",
		"reference":         "Reference",
		"failure":           "Failure",
		"amounts":           "Amounts",
		"requested_amount":  "Requested amount",
		"fees":              "Fees",
		"details":           "Details",
		"customer":          "Customer",
		"phone":             "Phone",
		"recipient":         "Recipient",
		"created_at":        "Created",
		"completed_at":      "Completed",
		"timeline":          "Status history",
		"from_status":       "from",
		"gateway":           "Gateway",
		"last_answer":       "Last answer",
		"no_document":       "No document.",

		"transaction_title":        "Transaction",
		"status_AWAITING_APPROVAL": "Awaiting approval",
		"status_PENDING":           "Pending",
		"status_SUCCESS":           "Succeeded",
		"status_FAILED":            "Failed",
		"status_CANCELLED":         "Cancelled",
		"attempt_PENDING":          "In progress",
		"attempt_SUCCESS":          "Succeeded",
		"attempt_FAILED":           "Failed",
		"type_PAIEMENT":            "Payment",
		"type_RECHARGE":            "Top-up",
		"type_RETRAIT":             "Payout",
		"type_TRANSFERT":           "Transfer",
		"type_REMBOURSEMENT":       "Refund",
		"trigger_SYSTEM":           "Sika",
		"trigger_ADMIN":            "Sika support",
		"trigger_CLIENT":           "Merchant request",
		"trigger_WEBHOOK_CALLBACK": "Operator notification",

		"reason_payment_requested":    "Payment requested",
		"reason_checkout_requested":   "Payment requested on the checkout page",
		"reason_link_requested":       "Payment requested on the payment link page",
		"reason_payout_requested":     "Payout requested",
		"reason_settlement_requested": "Settlement requested",
		"reason_transfer_requested":   "Wallet transfer requested",
		"reason_refund_requested":     "Refund of %s requested",
		"reason_confirmed":            "Confirmed",
		"reason_confirmed_callback":   "Confirmed by %s's notification",
		"reason_confirmed_by":         "Confirmed by %s",
		"reason_refused_by":           "Refused by %s: %t",
		"reason_awaiting_operator":    "Awaiting the operator's final answer: the payout was sent but the operator has not confirmed it yet. The amount stays held until the operator answers.",
	},
}
