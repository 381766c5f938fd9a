package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// volumeDays is how many days the home page's chart shows, today (UTC) included.
const volumeDays = 30

// volumeData is the home page's volume of the last volumeDays days: per currency, per day,
// what was collected and paid out (store.DailyVolumes), and the success rate of collections.
type volumeData struct {
	Currencies []currencyVolume
	// Succeeded and Finished count the collections of the window that ended (FAILED and
	// CANCELLED are the others); SuccessRate is "" when none ended.
	Succeeded, Finished int
	SuccessRate         string
	// Chart is the JSON the chart's script reads from a data attribute (no inline script).
	Chart string
}

// currencyVolume is one currency's days, oldest first, every day of the window present.
type currencyVolume struct {
	Currency                string
	Days                    []store.DailyVolume
	Collected, PaidOut      decimal.Decimal
	CollectedText, PaidText string
}

// chartSeries is what static/money.js draws for a currency: the days (unix seconds, midnight
// UTC), the amounts as decimal strings, and the same amounts as the page writes them
// (sika.FormatMoney), for the legend.
type chartSeries struct {
	Currency      string   `json:"currency"`
	Days          []int64  `json:"days"`
	Collected     []string `json:"collected"`
	PaidOut       []string `json:"paid_out"`
	CollectedText []string `json:"collected_text"`
	PaidOutText   []string `json:"paid_out_text"`
}

type chartData struct {
	Lang           string        `json:"lang"`
	LabelCollected string        `json:"label_collected"`
	LabelPaidOut   string        `json:"label_paid_out"`
	LabelDay       string        `json:"label_day"`
	Series         []chartSeries `json:"series"`
}

// volume reads the last volumeDays days of the session's merchant and environment.
func (a *App) volume(r *http.Request, v *visit) (volumeData, error) {
	now := a.cfg.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	since := today.AddDate(0, 0, -(volumeDays - 1))
	rows, err := a.cfg.Store.DailyVolumes(r.Context(), v.merchant.ID, v.env, since)
	if err != nil {
		return volumeData{}, err
	}
	return buildVolume(rows, since, v.Lang)
}

// buildVolume lays the store's rows out day by day per currency (a day without a transaction
// is a zero) and computes the success rate.
func buildVolume(rows []store.DailyVolume, since time.Time, lang string) (volumeData, error) {
	var d volumeData
	index := map[string]int{}
	for _, row := range rows {
		i, ok := index[row.Currency]
		if !ok {
			i = len(d.Currencies)
			index[row.Currency] = i
			cv := currencyVolume{Currency: row.Currency, Days: make([]store.DailyVolume, volumeDays)}
			for day := range cv.Days {
				cv.Days[day] = store.DailyVolume{Day: since.AddDate(0, 0, day), Currency: row.Currency}
			}
			d.Currencies = append(d.Currencies, cv)
		}
		day := int(row.Day.Sub(since).Hours() / 24)
		if day < 0 || day >= volumeDays {
			continue
		}
		cv := &d.Currencies[i]
		cv.Days[day] = row
		cv.Collected = cv.Collected.Add(row.Collected)
		cv.PaidOut = cv.PaidOut.Add(row.PaidOut)
		d.Succeeded += row.CollectionsSucceeded
		d.Finished += row.CollectionsSucceeded + row.CollectionsFailed
	}
	d.SuccessRate = successRate(d.Succeeded, d.Finished, lang)
	chart := chartData{Lang: lang, LabelCollected: translate(lang, "volume_collected"), LabelPaidOut: translate(lang, "volume_paid_out"),
		LabelDay: translate(lang, "volume_day")}
	for i := range d.Currencies {
		cv := &d.Currencies[i]
		cv.CollectedText, cv.PaidText = sika.FormatMoney(cv.Collected, cv.Currency, lang), sika.FormatMoney(cv.PaidOut, cv.Currency, lang)
		s := chartSeries{Currency: cv.Currency}
		for _, day := range cv.Days {
			s.Days = append(s.Days, day.Day.Unix())
			s.Collected = append(s.Collected, day.Collected.StringFixed(2))
			s.PaidOut = append(s.PaidOut, day.PaidOut.StringFixed(2))
			s.CollectedText = append(s.CollectedText, sika.FormatMoney(day.Collected, cv.Currency, lang))
			s.PaidOutText = append(s.PaidOutText, sika.FormatMoney(day.PaidOut, cv.Currency, lang))
		}
		chart.Series = append(chart.Series, s)
	}
	raw, err := json.Marshal(chart)
	if err != nil {
		return d, fmt.Errorf("encode chart: %w", err)
	}
	d.Chart = string(raw)
	return d, nil
}

// successRate is succeeded out of finished as a percentage with one decimal, written as the
// page's language writes it ("97,5 %" in French, "97.5%" in English); "" when none finished.
func successRate(succeeded, finished int, lang string) string {
	if finished == 0 {
		return ""
	}
	pct := decimal.NewFromInt(int64(succeeded)).Mul(decimal.NewFromInt(100)).
		DivRound(decimal.NewFromInt(int64(finished)), 1)
	if lang == "en" {
		return pct.StringFixed(1) + "%"
	}
	return strings.Replace(pct.StringFixed(1), ".", ",", 1) + "\u00a0%"
}
