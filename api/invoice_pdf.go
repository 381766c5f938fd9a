package api

import (
	"io"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// invoice is what the PDF invoice shows.
type invoice struct {
	sika.Transaction
	Merchant    string
	NetworkName string
}

// invoiceLabels are the words of the invoice in one language.
type invoiceLabels struct {
	code, fileStem                                string
	title, number, date, merchant, customer       string
	description, amount                           string
	requested, fee, feeIncluded, total            string
	paymentMethod, operatorReference, transaction string
	paidOn, generated, footer, defaultDescription string
	months                                        [12]string
}

// invoiceLanguages are the invoice's languages by code.
var invoiceLanguages = map[string]*invoiceLabels{
	"fr": {
		code: "fr", fileStem: "facture",
		title: "Facture", number: "N°", date: "Date", merchant: "Marchand", customer: "Client",
		description: "Description", amount: "Montant",
		requested: "Montant demandé", fee: "Frais", feeIncluded: "Frais inclus dans le montant", total: "Total payé",
		paymentMethod: "Moyen de paiement", operatorReference: "Référence opérateur", transaction: "Transaction",
		paidOn: "Payé le", generated: "Document généré le", footer: "Ce document tient lieu de reçu de paiement.",
		defaultDescription: "Paiement",
		months: [12]string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
			"octobre", "novembre", "décembre"},
	},
	"en": {
		code: "en", fileStem: "invoice",
		title: "Invoice", number: "No.", date: "Date", merchant: "Merchant", customer: "Customer",
		description: "Description", amount: "Amount",
		requested: "Requested amount", fee: "Fees", feeIncluded: "Fees included in the amount", total: "Total paid",
		paymentMethod: "Payment method", operatorReference: "Operator reference", transaction: "Transaction",
		paidOn: "Paid on", generated: "Document generated on", footer: "This document serves as a receipt of payment.",
		defaultDescription: "Payment",
		months: [12]string{"January", "February", "March", "April", "May", "June", "July", "August", "September",
			"October", "November", "December"},
	},
}

// dateTime writes an instant in the language, in UTC: "31 janvier 2026, 09:30 UTC".
func (l *invoiceLabels) dateTime(t time.Time) string {
	t = t.UTC()
	return l.day(t) + ", " + t.Format("15:04") + " UTC"
}

// day writes a date in the language: "31 janvier 2026".
func (l *invoiceLabels) day(t time.Time) string {
	t = t.UTC()
	return t.Format("2") + " " + l.months[t.Month()-1] + " " + t.Format("2006")
}

// money writes an amount as people in the region read it, through the one formatting
// function of the service (sika.FormatMoney): "1 015 FCFA" in French, "XOF 1,015" in English.
func (l *invoiceLabels) money(d decimal.Decimal, currency string) string {
	return sika.FormatMoney(d, currency, l.code)
}

// Layout of the A4 page, in millimetres.
const (
	invoiceMargin  = 20.0
	invoiceWidth   = 210.0 - 2*invoiceMargin
	invoiceAmountW = 50.0
	invoiceLine    = 6.0
)

// renderInvoice writes the invoice as a PDF. Core fonts with the cp1252 code page render French
// (é, è, ç, à, û…); a character outside it is drawn as a dot. The document's dates are the
// payment's, so that one invoice always renders to the same bytes but for the generation line.
func renderInvoice(w io.Writer, inv invoice, l *invoiceLabels, now time.Time) error {
	pdf := fpdf.New("P", "mm", "A4", "")
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	paidAt := inv.CreatedAt
	if inv.CompletedAt != nil {
		paidAt = *inv.CompletedAt
	}
	pdf.SetCreationDate(paidAt)
	pdf.SetModificationDate(paidAt)
	pdf.SetCatalogSort(true)
	pdf.SetTitle(l.title+" "+inv.Reference, true)
	pdf.SetAuthor(inv.Merchant, true)
	pdf.SetCreator("Sika", true)
	pdf.SetLang(l.code)
	pdf.SetMargins(invoiceMargin, invoiceMargin, invoiceMargin)
	pdf.SetAutoPageBreak(true, invoiceMargin)
	pdf.AddPage()

	text := func(style string, size float64, r, g, b int) {
		pdf.SetFont("Helvetica", style, size)
		pdf.SetTextColor(r, g, b)
	}
	cell := func(w float64, s, align string) {
		pdf.CellFormat(w, invoiceLine, fit(pdf, tr(s), w), "", 0, align, false, 0, "")
	}
	line := func() {
		pdf.Ln(invoiceLine)
	}
	rule := func() {
		y := pdf.GetY() + 2
		pdf.SetDrawColor(200, 200, 200)
		pdf.Line(invoiceMargin, y, invoiceMargin+invoiceWidth, y)
		pdf.SetY(y + 3)
	}

	// Header: the merchant on the left, the title, number and date on the right.
	half := invoiceWidth / 2
	text("B", 18, 20, 20, 20)
	cell(half, inv.Merchant, "L")
	text("B", 18, 20, 60, 140)
	cell(half, l.title, "R")
	line()
	line()
	text("", 10, 80, 80, 80)
	cell(half, "", "L")
	cell(half, l.number+" "+inv.Reference, "R")
	line()
	cell(half, "", "L")
	cell(half, l.date+" : "+l.day(paidAt), "R")
	line()
	rule()

	// Parties.
	text("B", 10, 20, 20, 20)
	cell(half, l.merchant, "L")
	cell(half, l.customer, "L")
	line()
	text("", 10, 50, 50, 50)
	merchant := inv.Merchant
	for _, c := range []string{inv.CustomerName, inv.CustomerEmail, inv.CustomerPhone} {
		if merchant == "" && c == "" {
			continue
		}
		cell(half, merchant, "L")
		cell(half, c, "L")
		line()
		merchant = ""
	}
	line()

	// The line of the invoice.
	pdf.SetFillColor(240, 243, 248)
	text("B", 10, 20, 20, 20)
	pdf.CellFormat(invoiceWidth-invoiceAmountW, invoiceLine+2, tr(l.description), "", 0, "L", true, 0, "")
	pdf.CellFormat(invoiceAmountW, invoiceLine+2, tr(l.amount), "", 0, "R", true, 0, "")
	pdf.Ln(invoiceLine + 3)
	text("", 10, 30, 30, 30)
	description := inv.Description
	if description == "" {
		description = l.defaultDescription
	}
	cell(invoiceWidth-invoiceAmountW, description, "L")
	cell(invoiceAmountW, l.money(inv.RequestedAmount.Decimal, inv.Currency), "R")
	line()
	rule()

	// Totals, right-aligned under the amount column.
	labelW := 80.0
	indent := invoiceWidth - invoiceAmountW - labelW
	total := func(label string, d decimal.Decimal, bold bool) {
		style := ""
		if bold {
			style = "B"
		}
		text(style, 10, 30, 30, 30)
		cell(indent, "", "L")
		cell(labelW, label, "R")
		cell(invoiceAmountW, l.money(d, inv.Currency), "R")
		line()
	}
	// The fee is added to the requested amount (ADD_ON) or included in it (DEDUCTED: the
	// customer pays the requested amount and the merchant bears the fee).
	feeLabel := l.fee
	if inv.FeeChargeMode == sika.FeeDeducted {
		feeLabel = l.feeIncluded
	}
	total(l.requested, inv.RequestedAmount.Decimal, false)
	total(feeLabel, inv.ClientFee.Decimal, false)
	total(l.total, inv.DebitedAmount.Decimal, true)
	line()

	// Payment details.
	text("", 9, 90, 90, 90)
	details := [][2]string{
		{l.paidOn, l.dateTime(paidAt)},
		{l.paymentMethod, inv.NetworkName + " (" + inv.Network + ")"},
		{l.operatorReference, inv.GatewayReference},
		{l.transaction, inv.ID.String()},
	}
	for _, d := range details {
		if d[1] == "" {
			continue
		}
		cell(45, d[0], "L")
		cell(invoiceWidth-45, d[1], "L")
		line()
	}

	// Footer.
	pdf.SetY(-invoiceMargin - 2*invoiceLine)
	text("I", 8, 120, 120, 120)
	cell(invoiceWidth, l.footer, "C")
	line()
	cell(invoiceWidth, l.generated+" "+l.dateTime(now), "C")
	return pdf.Output(w)
}

// fit shortens an (already translated) text with an ellipsis until it fits width w.
func fit(pdf *fpdf.Fpdf, s string, w float64) string {
	const ellipsis = "\x85" // … in cp1252
	if pdf.GetStringWidth(s) <= w-2 {
		return s
	}
	for len(s) > 0 && pdf.GetStringWidth(s+ellipsis) > w-2 {
		s = s[:len(s)-1]
	}
	return s + ellipsis
}
