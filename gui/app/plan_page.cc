#include "gui/app/plan_page.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QPen>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextEdit>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>

namespace trainsim::gui {

namespace {

// Enough decimals to tell the ticks of an axis spanning `span` apart.
QString LabelFormat(double span) {
  const int decimals = span >= 10 ? 0 : span >= 1 ? 1 : 2;
  return QStringLiteral("%.%1f").arg(decimals);
}

}  // namespace

PlanPage::PlanPage(QWidget* parent)
    : QWidget(parent),
      candidates_(new CandidateTableModel(this)),
      pareto_(new ParetoModel(this)),
      proxy_(new QSortFilterProxyModel(this)) {
  makeTable();
  makeChart();
  reasons_ = new QTextEdit;
  reasons_->setReadOnly(true);
  reasons_->setPlaceholderText(QStringLiteral("The recommendation's reasons appear here."));
  auto* bottom = new QSplitter(Qt::Horizontal);
  bottom->addWidget(chart_view_);
  bottom->addWidget(reasons_);
  bottom->setStretchFactor(0, 3);
  bottom->setStretchFactor(1, 2);
  bottom->setSizes({600, 400});  // proportions: the chart gets 3/5
  auto* main = new QSplitter(Qt::Vertical);
  main->addWidget(table_);
  main->addWidget(bottom);
  main->setSizes({400, 600});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(main);
  connectParts();
}

// The candidate table, sortable by the raw values.
void PlanPage::makeTable() {
  proxy_->setSourceModel(candidates_);
  proxy_->setSortRole(CandidateTableModel::kSortRole);
  table_ = new QTableView;
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(CandidateTableModel::kRank, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

// The Pareto chart: every priced option, and the front over it.
void PlanPage::makeChart() {
  auto* chart = new QChart;
  chart->setTitle(QStringLiteral("Expected time against expected cost"));
  options_series_ = new QScatterSeries;
  options_series_->setName(QStringLiteral("priced options"));
  options_series_->setMarkerSize(8);
  options_series_->setColor(QColor(160, 160, 160));
  front_series_ = new QScatterSeries;
  front_series_->setName(QStringLiteral("Pareto front"));
  front_series_->setMarkerSize(12);
  front_series_->setColor(QColor(31, 119, 180));
  front_series_->setSelectedColor(QColor(214, 39, 40));
  options_series_->setSelectedColor(QColor(214, 39, 40));
  chart->addSeries(options_series_);
  chart->addSeries(front_series_);
  auto* x = new QValueAxis;
  x->setTitleText(QStringLiteral("hours"));
  auto* y = new QValueAxis;
  y->setTitleText(QStringLiteral("cost $"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (QScatterSeries* s : {options_series_, front_series_}) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
  chart_view_ = new QChartView(chart);
  chart_view_->setRenderHint(QPainter::Antialiasing);
  chart_view_->setMinimumHeight(280);
}

// The table, the chart and the selection follow one another.
void PlanPage::connectParts() {
  connect(candidates_, &QAbstractItemModel::modelReset, this,
          [this] { table_->sortByColumn(CandidateTableModel::kRank, Qt::AscendingOrder); });
  connect(pareto_, &QAbstractItemModel::modelReset, this, &PlanPage::rebuildChart);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &PlanPage::onTableSelection);
  // Queued: selecting a point restyles the series' markers, which must not
  // happen inside the chart's own mouse-release handling (Qt Charts 6.4
  // crashes on a marker deleted under its feet).
  auto on_click = [this](QScatterSeries* series, ParetoModel::Series which) {
    connect(
        series, &QXYSeries::clicked, this,
        [this, series, which](const QPointF& p) {
          const QList<QPointF> pts = series->points();
          const auto it = std::find(pts.begin(), pts.end(), p);
          if (it != pts.end()) selectPoint(which, static_cast<int>(it - pts.begin()));
        },
        Qt::QueuedConnection);
  };
  on_click(front_series_, ParetoModel::kFront);
  on_click(options_series_, ParetoModel::kAllOptions);
}

void PlanPage::setPlanned(std::shared_ptr<const PlannedScenario> planned) {
  const std::shared_ptr<const planner::Plan> plan = planned ? planned->plan : nullptr;
  candidates_->setPlan(plan);
  pareto_->setPlan(plan);
  QString text;
  if (plan && plan->best >= 0) {
    text += plan->meets_constraints ? QStringLiteral("<b>Recommendation</b>")
                                    : QStringLiteral("<b>Recommendation (misses a constraint)</b>");
    text += QStringLiteral("<ul>");
    for (const std::string& r : plan->reasons) {
      text += QStringLiteral("<li>") + QString::fromStdString(r).toHtmlEscaped() +
              QStringLiteral("</li>");
    }
    text += QStringLiteral("</ul>");
  }
  reasons_->setHtml(text);
  const int row = candidates_->recommendedRow();
  if (row >= 0) table_->selectRow(proxy_->mapFromSource(candidates_->index(row, 0)).row());
}

int PlanPage::selectedCandidate() const {
  const QModelIndexList rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return -1;
  return proxy_->mapToSource(rows.first()).row();
}

void PlanPage::rebuildChart() {
  QList<QPointF> front, all;
  for (int i = 0; i < pareto_->pointCount(ParetoModel::kFront); ++i)
    front.append(pareto_->point(ParetoModel::kFront, i));
  for (int i = 0; i < pareto_->pointCount(ParetoModel::kAllOptions); ++i)
    all.append(pareto_->point(ParetoModel::kAllOptions, i));
  front_series_->replace(front);
  options_series_->replace(all);
  // The front's error bars: a cross from P10 to P90 of hours and of cost through each point.
  QChart* chart = chart_view_->chart();
  for (QLineSeries* bar : bars_) {
    chart->removeSeries(bar);
    delete bar;
  }
  bars_.clear();
  QList<QPointF> reach = all;  // what the axes must show
  for (int i = 0; i < pareto_->pointCount(ParetoModel::kFront); ++i) {
    const QPointF p = front[i];
    const QRectF s = pareto_->spread(ParetoModel::kFront, i);
    auto* bar = new QLineSeries;
    bar->append({QPointF(s.left(), p.y()), QPointF(s.right(), p.y()), p, QPointF(p.x(), s.top()),
                 QPointF(p.x(), s.bottom())});
    bar->setName(QStringLiteral("P10-P90: interruptions and the model's error"));
    bar->setPen(QPen(QColor(31, 119, 180, 160), 1.5));
    chart->addSeries(bar);
    for (QAbstractAxis* a : chart->axes()) bar->attachAxis(a);
    for (QLegendMarker* m : chart->legend()->markers(bar)) m->setVisible(i == 0);
    bars_.push_back(bar);
    reach << s.topLeft() << s.bottomRight();
  }
  // The points above the bars, where clicks reach them: the last series added is on top.
  for (QScatterSeries* points : {options_series_, front_series_}) {
    chart->removeSeries(points);
    chart->addSeries(points);
    for (QAbstractAxis* a : chart->axes()) points->attachAxis(a);
  }
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (!reach.isEmpty()) {
    x0 = x1 = reach.first().x();
    y0 = y1 = reach.first().y();
    for (const QPointF& p : reach) {
      x0 = std::min(x0, p.x());
      x1 = std::max(x1, p.x());
      y0 = std::min(y0, p.y());
      y1 = std::max(y1, p.y());
    }
    const double dx = std::max((x1 - x0) * 0.08, 0.05 * std::max(1.0, x1));
    const double dy = std::max((y1 - y0) * 0.08, 0.05 * std::max(1.0, y1));
    x0 = std::max(0.0, x0 - dx);
    x1 += dx;
    y0 = std::max(0.0, y0 - dy);
    y1 += dy;
  }
  const auto axes = chart->axes();
  for (QAbstractAxis* a : axes) {
    auto* axis = static_cast<QValueAxis*>(a);
    const bool horizontal = a->orientation() == Qt::Horizontal;
    axis->setRange(horizontal ? x0 : y0, horizontal ? x1 : y1);
    axis->applyNiceNumbers();
    axis->setLabelFormat(LabelFormat(axis->max() - axis->min()));
  }
}

void PlanPage::selectPoint(ParetoModel::Series series, int index) {
  const int row = pareto_->candidateRow(series, index);
  if (row < 0) return;
  table_->selectRow(proxy_->mapFromSource(candidates_->index(row, 0)).row());
  table_->scrollTo(table_->currentIndex());
}

void PlanPage::onTableSelection() {
  front_series_->deselectAllPoints();
  options_series_->deselectAllPoints();
  const int row = selectedCandidate();
  if (row >= 0) {
    for (int i : pareto_->pointsOfRow(ParetoModel::kFront, row)) front_series_->selectPoint(i);
    for (int i : pareto_->pointsOfRow(ParetoModel::kAllOptions, row))
      options_series_->selectPoint(i);
  }
  emit candidateSelected(row);
}

}  // namespace trainsim::gui
