#include "gui/app/scaling_page.h"

#include <QHeaderView>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>

#include "planner/search/space.h"

namespace trainsim::gui {
namespace {

QTableView* MakeTable(QAbstractItemModel* model) {
  auto* t = new QTableView;
  t->setModel(model);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setStretchLastSection(true);
  t->setSelectionMode(QAbstractItemView::NoSelection);
  return t;
}

QAbstractAxis* Axis(QChart* chart, Qt::Alignment where) {
  const QList<QAbstractAxis*> axes = chart->axes();
  for (QAbstractAxis* a : axes) {
    if (a->alignment() == where) return a;
  }
  return nullptr;
}

// A value range from 0 to a little above `top`, on round numbers.
void FromZero(QAbstractAxis* axis, double top) {
  auto* values = static_cast<QValueAxis*>(axis);
  values->setRange(0, top > 0 ? top * 1.1 : 1);
  values->applyNiceNumbers();
  // Whole numbers once the ticks are whole (dollars, samples/s).
  values->setLabelFormat(values->max() >= 10 ? QStringLiteral("%.0f") : QStringLiteral("%.2f"));
}

}  // namespace

ScalingPage::ScalingPage(QWidget* parent)
    : QWidget(parent), scaling_(new ScalingModel(this)), pricing_(new PricingModel(this)) {
  scaling_view_ = makeScalingChart();
  pricing_view_ = makePricingChart();
  scaling_table_ = MakeTable(scaling_);
  pricing_table_ = MakeTable(pricing_);
  auto* left = new QSplitter(Qt::Vertical);
  left->addWidget(scaling_view_);
  left->addWidget(scaling_table_);
  left->setSizes({520, 200});
  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(pricing_view_);
  right->addWidget(pricing_table_);
  right->setSizes({520, 200});
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(left);
  split->addWidget(right);
  split->setSizes({640, 560});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);
  connect(scaling_, &QAbstractItemModel::modelReset, this, &ScalingPage::rebuildScaling);
  connect(pricing_, &QAbstractItemModel::modelReset, this, &ScalingPage::rebuildPricing);
}

QChartView* ScalingPage::makeScalingChart() {
  auto* chart = new QChart;
  chart->setTitle(
      QStringLiteral("Scaling of the recommended layout<br><small>simulated at each node "
                     "count (\u201ce\u201d in the table: estimated)</small>"));
  throughput_ = new QLineSeries;
  throughput_->setName(QStringLiteral("samples/s"));
  throughput_->setPointsVisible(true);
  cost_ = new QLineSeries;
  cost_->setName(QStringLiteral("expected cost $"));
  cost_->setPointsVisible(true);
  stops_ = new QScatterSeries;
  stops_->setName(QStringLiteral("adding nodes stops paying"));
  stops_->setMarkerSize(16);
  stops_->setColor(QColor(214, 39, 40));
  stops_->setPointLabelsVisible(true);
  stops_->setPointLabelsFormat(QStringLiteral("stops paying after @xPoint nodes"));
  // The band first: drawn under the curve.
  band_ = new QAreaSeries(new QLineSeries, new QLineSeries);
  band_->setName(QStringLiteral("80% error band"));
  band_->setColor(QColor(31, 119, 180, 50));
  band_->setBorderColor(QColor(31, 119, 180, 90));
  for (QAbstractSeries* s :
       std::initializer_list<QAbstractSeries*>{band_, throughput_, cost_, stops_})
    chart->addSeries(s);
  auto* nodes = new QLogValueAxis;
  nodes->setBase(2);
  nodes->setLabelFormat(QStringLiteral("%g"));
  nodes->setTitleText(QStringLiteral("nodes"));
  auto* rate = new QValueAxis;
  rate->setTitleText(QStringLiteral("samples/s"));
  auto* cost = new QValueAxis;
  cost->setTitleText(QStringLiteral("expected cost $"));
  chart->addAxis(nodes, Qt::AlignBottom);
  chart->addAxis(rate, Qt::AlignLeft);
  chart->addAxis(cost, Qt::AlignRight);
  for (QAbstractSeries* s :
       std::initializer_list<QAbstractSeries*>{band_, throughput_, stops_, cost_}) {
    s->attachAxis(nodes);
    s->attachAxis(s == cost_ ? static_cast<QAbstractAxis*>(cost) : rate);
  }
  chart->legend()->setAlignment(Qt::AlignBottom);
  auto* view = new QChartView(chart);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(260);
  return view;
}

QChartView* ScalingPage::makePricingChart() {
  auto* chart = new QChart;
  chart->setTitle(QStringLiteral("Cost by pricing option"));
  pricing_series_ = new QBarSeries;
  chart->addSeries(pricing_series_);
  auto* options = new QBarCategoryAxis;
  auto* cost = new QValueAxis;
  cost->setTitleText(QStringLiteral("cost $ over the whole job"));
  chart->addAxis(options, Qt::AlignBottom);
  chart->addAxis(cost, Qt::AlignLeft);
  pricing_series_->attachAxis(options);
  pricing_series_->attachAxis(cost);
  chart->legend()->setAlignment(Qt::AlignBottom);
  auto* view = new QChartView(chart);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(260);
  return view;
}

void ScalingPage::setPlanned(std::shared_ptr<const PlannedScenario> planned) {
  if (planned == planned_) return;
  planned_ = std::move(planned);
  scaling_->setPlan(planned_ ? planned_->plan : nullptr);
  pricing_->clear();
}

void ScalingPage::showCandidate(std::shared_ptr<const PlannedScenario> planned, int confirmed) {
  setPlanned(std::move(planned));
  pricing_->setCandidate(planned_ ? planned_->plan : nullptr, confirmed);
}

void ScalingPage::rebuildScaling() {
  QList<QPointF> rate, cost, stops, low, high;
  double min_nodes = 1, max_nodes = 2, top_rate = 0, top_cost = 0;
  for (int r = 0; r < scaling_->rowCount(); ++r) {
    const planner::ScalingPoint& p = scaling_->point(r);
    rate.append(QPointF(p.nodes, p.samples_per_s));
    const QModelIndex at = scaling_->index(r, 0);
    if (const QVariant lo = at.data(ScalingModel::kBandLowRole); lo.isValid()) {
      low.append(QPointF(p.nodes, lo.toDouble()));
      high.append(QPointF(p.nodes, at.data(ScalingModel::kBandHighRole).toDouble()));
      top_rate = std::max(top_rate, high.last().y());
    }
    if (p.expected_cost_usd) cost.append(QPointF(p.nodes, *p.expected_cost_usd));
    if (r == scaling_->stopsPayingRow()) stops.append(rate.last());
    min_nodes = r == 0 ? p.nodes : std::min<double>(min_nodes, p.nodes);
    max_nodes = r == 0 ? p.nodes : std::max<double>(max_nodes, p.nodes);
    top_rate = std::max(top_rate, p.samples_per_s);
    top_cost = std::max(top_cost, p.expected_cost_usd.value_or(0));
  }
  throughput_->replace(rate);
  cost_->replace(cost);
  band_->upperSeries()->replace(high);
  band_->lowerSeries()->replace(low);
  for (QLegendMarker* m : scaling_view_->chart()->legend()->markers(band_))
    m->setVisible(!high.isEmpty());
  // The curve is priced like the recommendation.
  const planner::Plan* plan = planned_ ? planned_->plan.get() : nullptr;
  cost_->setName(plan && plan->best >= 0 && plan->best_priced >= 0
                     ? QStringLiteral("expected cost $ (%1)")
                           .arg(QString::fromLatin1(ToString(
                               plan->confirmed[plan->best].priced[plan->best_priced].pricing)))
                     : QStringLiteral("expected cost $"));
  stops_->replace(stops);
  for (QLegendMarker* m : scaling_view_->chart()->legend()->markers(stops_))
    m->setVisible(!stops.isEmpty());  // no mark, no legend entry
  QChart* chart = scaling_view_->chart();
  Axis(chart, Qt::AlignBottom)->setRange(min_nodes / 1.25, std::max(max_nodes, 2.0) * 1.25);
  FromZero(Axis(chart, Qt::AlignLeft), top_rate);
  FromZero(Axis(chart, Qt::AlignRight), top_cost);
}

void ScalingPage::rebuildPricing() {
  pricing_series_->clear();
  QChart* chart = pricing_view_->chart();
  auto* options = static_cast<QBarCategoryAxis*>(Axis(chart, Qt::AlignBottom));
  options->clear();
  if (pricing_->confirmed() < 0) {
    chart->setTitle(QStringLiteral("Cost by pricing option"));
    return;
  }
  const planner::Plan& plan = *planned_->plan;
  chart->setTitle(QStringLiteral("Cost by pricing option<br><small>#%1 %2</small>")
                      .arg(pricing_->confirmed() + 1)
                      .arg(QString::fromStdString(planner::Describe(
                          plan.space, plan.confirmed[pricing_->confirmed()].candidate))));
  if (pricing_->rowCount() == 0) {
    chart->setTitle(chart->title() + QStringLiteral("<br><small>no option has a price</small>"));
    return;
  }
  const std::pair<int, const char*> stats[] = {{PricingModel::kCostMean, "expected $"},
                                               {PricingModel::kCostP50, "P50 $"},
                                               {PricingModel::kCostP90, "P90 $"}};
  double top = 0;
  for (const auto& [column, name] : stats) {
    auto* set = new QBarSet(QString::fromLatin1(name));
    for (int r = 0; r < pricing_->rowCount(); ++r) {
      const double v = pricing_->index(r, column).data(PricingModel::kSortRole).toDouble();
      set->append(v);
      top = std::max(top, v);
    }
    pricing_series_->append(set);
  }
  QStringList names;
  for (int r = 0; r < pricing_->rowCount(); ++r)
    names << pricing_->index(r, PricingModel::kPricing).data().toString();
  options->append(names);
  FromZero(Axis(chart, Qt::AlignLeft), top);
}

}  // namespace trainsim::gui
