// The scaling page: the plan's scaling curve (throughput and expected cost of
// the recommendation's layout against node count, estimated, with where
// adding nodes stops paying, and its 80% error band shaded) and, for the candidate selected in the
// plan view, its pricing options' expected, P50 and P90 cost (spot against on-demand), each as a
// chart over its table.
#pragma once

#include <QWidget>
#include <memory>

#include "gui/models/planned.h"
#include "gui/models/pricing_model.h"
#include "gui/models/scaling_model.h"

class QAreaSeries;
class QBarSeries;
class QChartView;
class QLabel;
class QLineSeries;
class QScatterSeries;
class QTableView;

namespace trainsim::gui {

class ScalingPage : public QWidget {
  Q_OBJECT

 public:
  explicit ScalingPage(QWidget* parent = nullptr);

  // For the tests.
  PricingModel* pricing() const { return pricing_; }
  QLineSeries* throughputSeries() const { return throughput_; }
  // The samples/s error band: upperSeries() over lowerSeries(); empty without bands.
  QAreaSeries* bandSeries() const { return band_; }
  QLineSeries* costSeries() const { return cost_; }
  QScatterSeries* stopsPayingSeries() const { return stops_; }
  QBarSeries* pricingSeries() const { return pricing_series_; }

 public slots:
  void setPlanned(std::shared_ptr<const trainsim::gui::PlannedScenario> planned);
  // The pricing options of planned->plan->confirmed[confirmed] (-1: none).
  void showCandidate(std::shared_ptr<const trainsim::gui::PlannedScenario> planned, int confirmed);

 private:
  QChartView* makeScalingChart();
  QChartView* makePricingChart();
  void rebuildScaling();
  void rebuildPricing();

  std::shared_ptr<const PlannedScenario> planned_;
  ScalingModel* scaling_;
  PricingModel* pricing_;
  QChartView *scaling_view_, *pricing_view_;
  QLineSeries *throughput_, *cost_;
  QAreaSeries* band_;
  QScatterSeries* stops_;
  QBarSeries* pricing_series_;
  QTableView *scaling_table_, *pricing_table_;
};

}  // namespace trainsim::gui
